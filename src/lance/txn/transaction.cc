#include "lance/txn/transaction.h"
#include "lance/util/protobuf.h"

#include "lance/transaction.pb.h"

namespace lance::txn {
namespace {

const char* OperationName(pb::table::Transaction::OperationCase op) {
  using T = pb::table::Transaction;
  switch (op) {
    case T::kAppend: return "Append";
    case T::kDelete: return "Delete";
    case T::kOverwrite: return "Overwrite";
    case T::kCreateIndex: return "CreateIndex";
    case T::kRewrite: return "Rewrite";
    case T::kMerge: return "Merge";
    case T::kRestore: return "Restore";
    case T::kReserveFragments: return "ReserveFragments";
    case T::kUpdate: return "Update";
    case T::kProject: return "Project";
    case T::kUpdateConfig: return "UpdateConfig";
    case T::kDataReplacement: return "DataReplacement";
    case T::kUpdateMemWalState: return "UpdateMemWalState";
    case T::kClone: return "Clone";
    case T::kUpdateBases: return "UpdateBases";
    case T::kDataOverlay: return "DataOverlay";
    case T::OPERATION_NOT_SET: break;
  }
  return "Unknown";
}

}  // namespace

Result<TransactionSummary> ParseTransaction(std::string_view bytes, const std::string& what) {
  pb::table::Transaction proto;
  if (!util::ParseMessage(bytes, &proto)) {
    return Status::Invalid("corrupt transaction ", what, ": not a valid Transaction protobuf message");
  }
  TransactionSummary out;
  out.read_version = proto.read_version();
  out.uuid = proto.uuid();
  out.tag = proto.tag();
  out.operation = OperationName(proto.operation_case());
  out.properties = {proto.transaction_properties().begin(), proto.transaction_properties().end()};
  return out;
}

}  // namespace lance::txn

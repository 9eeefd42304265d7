// Placeholder until the 2.1 encoders land: refuses clearly instead of
// writing anything.
#include "lance/file/field_encoder.h"

namespace lance::file {

Result<std::unique_ptr<FieldEncoder>> MakeFieldEncoderV2_1(const Field& field, uint32_t, const EncoderOptions&) {
  return Status::NotImplemented("writing field '", field.name, "' in file version 2.1 is not implemented yet");
}

}  // namespace lance::file

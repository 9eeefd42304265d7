// Placeholder until the 2.0 encoders land: refuses clearly instead of
// writing anything.
#include "lance/file/field_encoder.h"

namespace lance::file {

Result<std::unique_ptr<FieldEncoder>> MakeFieldEncoderV2_0(const Field& field, uint32_t, const EncoderOptions&) {
  return Status::NotImplemented("writing field '", field.name, "' in file version 2.0 is not implemented yet");
}

}  // namespace lance::file

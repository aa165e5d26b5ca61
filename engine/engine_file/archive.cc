#include "engine/engine_file/archive.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <openssl/evp.h>

#include <climits>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "recq/status_macros.h"

namespace recq {
namespace internal {
namespace {

namespace pb = ::recq::engine_file;

absl::StatusOr<std::string> Sha256(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &size, EVP_sha256(), nullptr) != 1 ||
      size != 32) {
    return absl::InternalError("SHA-256 through OpenSSL EVP failed");
  }
  return std::string(reinterpret_cast<const char*>(digest), size);
}

// The envelope's fields, its payload a view into the file's bytes (the
// payload is most of the file: parsing the envelope as a message would copy
// it).
struct EnvelopeView {
  std::string magic;
  uint32_t format_version = 0;
  absl::string_view payload;
  std::string payload_sha256;
};

// ReadEnvelope reads an EngineFileEnvelope with protobuf's wire-format
// reader; false when `bytes` are not one.
bool ReadEnvelope(absl::string_view bytes, EnvelopeView* out) {
  using google::protobuf::internal::WireFormatLite;
  if (bytes.size() > static_cast<size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  for (;;) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return in.CurrentPosition() == static_cast<int>(bytes.size());
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const bool delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    uint32_t length = 0;
    if (field == pb::EngineFileEnvelope::kFormatVersionFieldNumber &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint32(&out->format_version)) return false;
    } else if (delimited && (field == pb::EngineFileEnvelope::kMagicFieldNumber ||
                             field == pb::EngineFileEnvelope::kPayloadSha256FieldNumber)) {
      std::string* value =
          field == pb::EngineFileEnvelope::kMagicFieldNumber ? &out->magic : &out->payload_sha256;
      if (!in.ReadVarint32(&length) || length > 256 || !in.ReadString(value, length)) return false;
    } else if (delimited && field == pb::EngineFileEnvelope::kPayloadFieldNumber) {
      if (!in.ReadVarint32(&length)) return false;
      const size_t start = static_cast<size_t>(in.CurrentPosition());
      if (length > bytes.size() - start || !in.Skip(static_cast<int>(length))) return false;
      out->payload = bytes.substr(start, length);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
}

}  // namespace

std::string SerializeDeterministically(const google::protobuf::MessageLite& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream out(&stream);
    out.SetSerializationDeterministic(true);
    if (!message.SerializeToCodedStream(&out)) return std::string();
  }
  return bytes;
}

absl::StatusOr<std::string> SealEngineFilePayload(std::string payload, uint32_t format_version) {
  pb::EngineFileEnvelope envelope;
  envelope.set_magic(kEngineFileMagic);
  envelope.set_format_version(format_version);
  RECQ_ASSIGN_OR_RETURN(std::string digest, Sha256(payload));
  envelope.set_payload_sha256(std::move(digest));
  envelope.set_payload(std::move(payload));
  std::string bytes;
  if (!envelope.SerializeToString(&bytes)) {
    return absl::InternalError("Engine::Serialize: the envelope does not serialize");
  }
  return bytes;
}

std::string WrapEngineFilePayload(absl::string_view payload, uint32_t format_version) {
  pb::EngineFileEnvelope envelope;
  envelope.set_magic(kEngineFileMagic);
  envelope.set_format_version(format_version);
  envelope.set_payload(std::string(payload));
  absl::StatusOr<std::string> digest = Sha256(payload);
  if (digest.ok()) envelope.set_payload_sha256(*digest);
  return envelope.SerializeAsString();
}

absl::StatusOr<pb::EngineFile> ReadEngineFileArchive(absl::string_view bytes) {
  EnvelopeView envelope;
  if (!ReadEnvelope(bytes, &envelope)) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a recq engine file: ", bytes.size(),
                     " bytes that do not parse as an engine-file envelope (truncated, corrupt, "
                     "or another kind of file)"));
  }
  if (envelope.magic != kEngineFileMagic) {
    return absl::InvalidArgumentError(
        "not a recq engine file: the envelope lacks the magic 'recq-engine'");
  }
  if (envelope.format_version != kEngineFileFormatVersion) {
    return absl::InvalidArgumentError(
        absl::StrCat("engine file format version ", envelope.format_version,
                     "; this build of recq reads "
                     "version ",
                     kEngineFileFormatVersion, ": rebuild the engine (recq build MODEL.onnx)"));
  }
  // A large payload's digest is taken on another thread while this one
  // parses (a small one's costs less than starting a thread): a parse of
  // unchecked bytes is safe (protobuf checks every length), and its result
  // is used only once the digest matches.
  constexpr size_t kDigestBesideParse = size_t{4} << 20;
  std::future<absl::StatusOr<std::string>> digest = std::async(
      envelope.payload.size() >= kDigestBesideParse ? std::launch::async : std::launch::deferred,
      [payload = envelope.payload] { return Sha256(payload); });
  pb::EngineFile f;
  const bool parsed =
      f.ParseFromArray(envelope.payload.data(), static_cast<int>(envelope.payload.size()));
  RECQ_ASSIGN_OR_RETURN(std::string payload_digest, digest.get());
  if (envelope.payload_sha256 != payload_digest) {
    return absl::DataLossError(
        absl::StrCat("engine file: the SHA-256 of its ", envelope.payload.size(),
                     "-byte payload does not match the stored one (corrupt, truncated or "
                     "modified file)"));
  }
  if (!parsed) {
    return absl::DataLossError(
        "engine file: the payload passes its checksum but does not parse (written by a "
        "broken writer?)");
  }
  return f;
}

}  // namespace internal

bool LooksLikeEngineFile(absl::string_view bytes) {
  // The envelope's first field is the magic: tag 0x0a, length, "recq-engine".
  const std::string magic = internal::kEngineFileMagic;
  return bytes.size() >= magic.size() + 2 && bytes[0] == 0x0a &&
         static_cast<size_t>(bytes[1]) == magic.size() && bytes.substr(2, magic.size()) == magic;
}

}  // namespace recq

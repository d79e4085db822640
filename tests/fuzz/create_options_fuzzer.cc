// libFuzzer target: arbitrary bytes decoded into a list of PJRT_NamedValue create options for
// PJRT_Client_Create; a client that is created is destroyed at once.
//
// Decoding (every byte string decodes; what runs out reads as zeros): up to 12 records of
//   name selector (1 byte): < 2 * kNames.size() picks a known option name (each twice as likely),
//                           else a name of (selector % 24) bytes taken from the input;
//   type (1 byte) % 5:      string, int64, int64 list, float, bool (the PJRT_NamedValue_Type
//                           values; 5 and up are also sent as they are, one in 8 records);
//   value:                  string: length byte % 40, then bytes; int64: 8 bytes; list: count
//                           byte % 6, then 8 bytes each; float: 4 bytes; bool: 1 byte.
// String values of the two plugin-path options are not opened as they are (a fuzzer must not
// dlopen whatever library a byte string happens to name): the first byte picks one of
// kPathChoices (the real XLA:CPU plugin included), or the bytes go under a directory that does
// not exist.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_support.h"

namespace {

// Option names pjrtkit knows (both devices, the device choice, multi-process), and an empty one.
const char* const kNames[] = {
    "device_count", "xla_cpu_plugin_path", "host_buffer_cache_mib", "process_join_timeout_s",
    "node_id", "num_nodes", "device", "xla_gpu_plugin_path", "allocator", "memory_fraction",
    "preallocate", "visible_devices", "max_inflight_computations", ""};
constexpr size_t kNumNames = sizeof(kNames) / sizeof(kNames[0]);

// Reads the input front to back; zeros once it runs out.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  std::string Bytes(size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(Byte()));
    return out;
  }
  int64_t Int64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(Byte()) << (8 * i);
    return static_cast<int64_t>(v);
  }
  bool done() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// A plugin path option's value: one of a few real choices, or bytes under a missing directory.
std::string PathValue(const std::string& bytes) {
  const char* real = std::getenv("PJRTKIT_XLA_CPU_PLUGIN");
  const std::string choices[] = {real != nullptr ? real : "", "", "/", "/dev/null",
                                 "xla_cpu_pjrt.so", "/nonexistent/xla_cpu_pjrt.so"};
  const uint8_t pick = bytes.empty() ? 0 : static_cast<uint8_t>(bytes[0]);
  if (pick < 6 * 32) return choices[pick % 6];
  return "/nonexistent-pjrtkit-fuzz/" + bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader in(data, size);
  std::vector<std::string> names;       // Backing storage; reserved so pointers stay put.
  std::vector<std::string> strings;
  std::vector<std::vector<int64_t>> lists;
  std::vector<PJRT_NamedValue> options;
  names.reserve(12);
  strings.reserve(12);
  lists.reserve(12);
  for (int record = 0; record < 12 && !in.done(); ++record) {
    const uint8_t selector = in.Byte();
    names.push_back(selector < 2 * kNumNames ? std::string(kNames[selector % kNumNames])
                                             : in.Bytes(selector % 24));
    const uint8_t type_byte = in.Byte();
    PJRT_NamedValue option{};
    option.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    option.name = names.back().data();
    option.name_size = names.back().size();
    option.type = static_cast<PJRT_NamedValue_Type>(type_byte % 5);
    switch (type_byte % 5) {
      case PJRT_NamedValue_kString: {
        std::string value = in.Bytes(in.Byte() % 40);
        if (names.back() == "xla_cpu_plugin_path" || names.back() == "xla_gpu_plugin_path") {
          value = PathValue(value);
        }
        strings.push_back(std::move(value));
        option.string_value = strings.back().data();
        option.value_size = strings.back().size();
        break;
      }
      case PJRT_NamedValue_kInt64:
        option.int64_value = in.Int64();
        option.value_size = 1;
        break;
      case PJRT_NamedValue_kInt64List: {
        lists.emplace_back(in.Byte() % 6);
        for (int64_t& v : lists.back()) v = in.Int64();
        option.int64_array_value = lists.back().data();
        option.value_size = lists.back().size();
        break;
      }
      case PJRT_NamedValue_kFloat: {
        const uint32_t bits = static_cast<uint32_t>(in.Int64() & 0xffffffff);
        std::memcpy(&option.float_value, &bits, sizeof(bits));
        option.value_size = 1;
        break;
      }
      default:
        option.bool_value = (in.Byte() & 1) != 0;
        option.value_size = 1;
        break;
    }
    // One record in 8 sends an out-of-range type (the union then holds an int64).
    if (type_byte >= 0xE0) option.type = static_cast<PJRT_NamedValue_Type>(type_byte);
    options.push_back(option);
  }

  pjrtkit_fuzz::FuzzSupport& support = pjrtkit_fuzz::FuzzSupport::Get();
  const PJRT_Api* api = support.api();
  PJRT_Client_Create_Args args{};
  args.struct_size = PJRT_Client_Create_Args_STRUCT_SIZE;
  args.create_options = options.data();
  args.num_options = options.size();
  if (support.Consume(api->PJRT_Client_Create(&args), "PJRT_Client_Create")) return 0;
  pjrtkit_fuzz::FuzzSupport::Require(args.client != nullptr,
                                     "PJRT_Client_Create succeeded without a client");
  PJRT_Client_Destroy_Args destroy{};
  destroy.struct_size = PJRT_Client_Destroy_Args_STRUCT_SIZE;
  destroy.client = args.client;
  pjrtkit_fuzz::FuzzSupport::Require(
      !support.Consume(api->PJRT_Client_Destroy(&destroy), "PJRT_Client_Destroy"),
      "PJRT_Client_Destroy failed");
  return 0;
}

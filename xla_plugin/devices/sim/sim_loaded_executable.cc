#include "xla_plugin/devices/sim/sim_loaded_executable.h"

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "xla_plugin/client/proto_writer.h"
#include "xla_plugin/devices/sim/compiler/cost_model.h"
#include "xla_plugin/devices/sim/executor/executor.h"
#include "xla_plugin/devices/sim/runtime/rendezvous.h"
#include "xla_plugin/devices/sim/sim_buffer.h"
#include "xla_plugin/devices/sim/sim_device.h"
#include "xla_plugin/devices/sim/sim_ffi_calls.h"

namespace pjrtkit {
namespace sim {

struct SimLoadedExecutable::DeviceRun {
  SimDevice* device = nullptr;
  int64_t logical_id = 0;
  std::vector<std::shared_ptr<Allocation>> arguments;  // Held until the execution is done.
  std::vector<std::shared_ptr<Event>> argument_events;
  std::vector<std::shared_ptr<Allocation>> outputs;
  std::shared_ptr<Allocation> scratch;
  std::shared_ptr<Event> done;                         // Ready when the device finished.
};

SimLoadedExecutable::SimLoadedExecutable(SimClient& client,
                                         std::shared_ptr<SimExecutable> executable,
                                         std::vector<SimDevice*> devices)
    : client_(client), executable_(std::move(executable)), sim_devices_(std::move(devices)) {
  for (SimDevice* d : sim_devices_) devices_.push_back(d);
  const DeviceProgram& program = executable_->program();
  for (const Computation& computation : program.computations) {
    for (const Instruction& instruction : computation.instructions) {
      if (instruction.opcode == Opcode::kCustomCall) {
        custom_calls_.insert(std::get<CustomCallParams>(instruction.params).target);
      }
    }
  }
  // Programs with custom calls run on the device's queue (their handlers run there, in order).
  run_inline_ = sim_devices_.size() == 1 && program.computations.size() == 1 &&
                custom_calls_.empty() && EstimateCost(program).bytes_accessed <= kInlineBytes;
}

StatusOr<std::unique_ptr<SimLoadedExecutable>> SimLoadedExecutable::Load(
    SimClient& client, std::shared_ptr<SimExecutable> executable) {
  std::vector<SimDevice*> devices;
  for (int id : executable->options().devices) {
    SimDevice* device = client.sim_device(id);
    if (device == nullptr) {
      return InvalidArgument("the executable is assigned to device " + std::to_string(id) +
                             ", which this client does not have");
    }
    devices.push_back(device);
  }
  std::unique_ptr<SimLoadedExecutable> loaded(
      new SimLoadedExecutable(client, std::move(executable), std::move(devices)));
  for (const std::string& target : loaded->custom_calls_) {
    if (client.ffi_handlers().Find(target) == nullptr) {
      return NotFound("No FFI handler registered for custom call @" + target + " on platform " +
                      client.platform_name() + " (register it with jax.ffi.register_ffi_target("
                      "..., platform='" + client.platform_name() + "'))");
    }
  }
  return loaded;
}

StatusOr<std::vector<LogicalDeviceId>> SimLoadedExecutable::addressable_device_logical_ids()
    const {
  std::vector<LogicalDeviceId> ids;
  const int64_t partitions = executable_->program().num_partitions;
  for (size_t i = 0; i < sim_devices_.size(); ++i) {
    ids.push_back({static_cast<int>(i / partitions), static_cast<int>(i % partitions)});
  }
  return ids;
}

StatusOr<std::string> SimLoadedExecutable::SerializedDeviceAssignment() const {
  // DeviceAssignmentProto: replica_count = 1, computation_count = 2, computation_devices = 3
  // (ComputationDevice.replica_device_ids = 1, packed).
  const int64_t replicas = executable_->program().num_replicas;
  const int64_t partitions = executable_->program().num_partitions;
  std::string out;
  AppendVarintField(1, static_cast<uint64_t>(replicas), &out);
  AppendVarintField(2, static_cast<uint64_t>(partitions), &out);
  for (int64_t p = 0; p < partitions; ++p) {
    std::vector<int64_t> ids;
    for (int64_t r = 0; r < replicas; ++r) ids.push_back(sim_devices_[r * partitions + p]->id());
    std::string device;
    AppendPackedField(1, ids, &device);
    AppendBytesField(3, device, &out);
  }
  return out;
}

StatusOr<SimLoadedExecutable::DeviceRun> SimLoadedExecutable::Prepare(
    SimDevice* device, int64_t logical_id, const std::vector<Buffer*>& arguments,
    const ExecuteOptions& options) {
  const DeviceProgram& program = executable_->program();
  const Computation& entry = program.entry();
  DeviceRun run;
  run.device = device;
  run.logical_id = logical_id;
  if (arguments.size() != entry.parameters.size()) {
    return InvalidArgument(program.name + " takes " + std::to_string(entry.parameters.size()) +
                           " arguments per device, got " + std::to_string(arguments.size()));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    auto* buffer = dynamic_cast<SimBuffer*>(arguments[i]);
    const ArrayType& want = entry.slot_types[entry.parameters[i]];
    if (buffer == nullptr) {
      return InvalidArgument("argument " + std::to_string(i) + " is not a sim buffer");
    }
    if (buffer->element_type() != want.type || buffer->dimensions() != want.dims) {
      ArrayType got{buffer->element_type(), buffer->dimensions()};
      return InvalidArgument("argument " + std::to_string(i) + " of " + program.name + " is " +
                             got.ToString() + ", the program takes " + want.ToString());
    }
    if (buffer->sim_device() != device) {
      return InvalidArgument("argument " + std::to_string(i) + " of " + program.name +
                             " is on " + buffer->device()->description().debug_string() +
                             ", the execution runs on " + device->description().debug_string());
    }
    const bool donate = program.parameter_donatable[i] &&
                        options.non_donatable_input_indices.count(static_cast<int64_t>(i)) == 0;
    std::shared_ptr<Allocation> allocation;
    if (donate) {
      PJRTKIT_ASSIGN_OR_RETURN(allocation, buffer->TakeForDonation());
    } else {
      allocation = buffer->allocation();
      if (allocation == nullptr) {
        return FailedPrecondition("argument " + std::to_string(i) + " of " + program.name +
                                  " was deleted or donated");
      }
    }
    run.arguments.push_back(std::move(allocation));
    run.argument_events.push_back(buffer->ReadyEvent());
  }
  for (Slot s : entry.results) {
    const ArrayType& type = entry.slot_types[s];
    PJRTKIT_ASSIGN_OR_RETURN(std::shared_ptr<Allocation> output,
                             device->memory().Allocate(type.byte_size(),
                                                       "output " + type.ToString() + " of " +
                                                           program.name));
    run.outputs.push_back(std::move(output));
  }
  PJRTKIT_ASSIGN_OR_RETURN(run.scratch,
                           device->memory().Allocate(Executor::ScratchBytes(program),
                                                     "temporaries of " + program.name));
  run.done = Event::Create();
  return run;
}

StatusOr<ExecuteResult> SimLoadedExecutable::Execute(
    const std::vector<std::vector<Buffer*>>& arguments, const ExecuteOptions& options) {
  if (IsDeleted()) return FailedPrecondition("the executable was deleted");
  std::vector<SimDevice*> devices = sim_devices_;
  if (options.execute_device != nullptr) {
    auto* device = dynamic_cast<SimDevice*>(options.execute_device);
    if (device == nullptr || devices.size() != 1) {
      return InvalidArgument("execute_device needs a single-device program and a sim device");
    }
    devices = {device};
  }
  if (arguments.size() != devices.size()) {
    return InvalidArgument(executable_->name() + " runs on " + std::to_string(devices.size()) +
                           " devices; got " + std::to_string(arguments.size()) +
                           " argument lists");
  }
  std::vector<DeviceRun> runs;
  for (size_t d = 0; d < devices.size(); ++d) {
    PJRTKIT_ASSIGN_OR_RETURN(DeviceRun run,
                             Prepare(devices[d], static_cast<int64_t>(d), arguments[d], options));
    runs.push_back(std::move(run));
  }
  const std::shared_ptr<const DeviceProgram> program = executable_->shared_program();
  std::shared_ptr<Rendezvous> rendezvous;
  if (devices.size() > 1) rendezvous = std::make_shared<Rendezvous>(static_cast<int>(devices.size()));
  ExecuteResult result;
  result.outputs.resize(devices.size());
  std::map<int64_t, void*> user_data;
  if (!custom_calls_.empty() && options.context != nullptr) {
    user_data = options.context->user_data();
  }
  // A short program run on this thread (at most one: only single-device programs run inline).
  struct InlineRun {
    Queue* queue = nullptr;
    std::function<Status(Status)> execute;
    std::shared_ptr<Event> ready;
    std::shared_ptr<Event> done;
  };
  std::optional<InlineRun> inline_run;
  {
    // Launches are enqueued under the client's launch mutex: exclusively for a multi-device
    // program, so every queue sees those launches in one order, and shared for a single-device
    // one, so that it cannot land between the pieces of a multi-device launch (it could wait on
    // work queued behind one piece while the others wait for that piece: a deadlock).
    std::shared_lock<std::shared_mutex> shared(client_.launch_mutex(), std::defer_lock);
    std::unique_lock<std::shared_mutex> exclusive(client_.launch_mutex(), std::defer_lock);
    if (devices.size() > 1) {
      exclusive.lock();
    } else {
      shared.lock();
    }
    for (DeviceRun& run : runs) {
      std::shared_ptr<Event> ready = Event::AfterAll(run.argument_events);
      std::shared_ptr<Event> done = run.done;
      auto shared_run = std::make_shared<DeviceRun>(std::move(run));
      const int64_t partitions = program->num_partitions;
      ExecutionPlace place;
      place.replica = shared_run->logical_id / partitions;
      place.partition = shared_run->logical_id % partitions;
      place.num_participants = static_cast<int64_t>(devices.size());
      std::shared_ptr<SimFfiCalls> custom_calls;
      if (!custom_calls_.empty()) {
        custom_calls = std::make_shared<SimFfiCalls>(
            client_.ffi_handlers(), user_data, shared_run->device->description().id(),
            client_.platform_name());
      }
      // The result buffers first: once the run starts, it may let go of its outputs at any time.
      const Computation& entry = program->entry();
      for (size_t j = 0; j < entry.results.size(); ++j) {
        const ArrayType& type = entry.slot_types[entry.results[j]];
        result.outputs[shared_run->logical_id].push_back(std::make_unique<SimBuffer>(
            shared_run->device, type.type, type.dims, shared_run->outputs[j], done));
      }
      // Runs the device's part; returns the status its outputs get.
      WorkerPool* workers = client_.workers();
      std::function<Status(Status)> execute = [program, shared_run, rendezvous, custom_calls,
                                               place, workers](Status status) mutable {
        place.rendezvous = rendezvous.get();
        place.custom_calls = custom_calls.get();
        place.workers = workers;
        if (status.ok()) {
          std::vector<const void*> args;
          for (const auto& a : shared_run->arguments) args.push_back(a->data());
          std::vector<void*> outputs;
          for (const auto& o : shared_run->outputs) outputs.push_back(o->data());
          status = Executor::Run(*program, place, args, outputs, shared_run->scratch->data());
        } else if (rendezvous != nullptr) {
          rendezvous->Abort(status);
        }
        // Arguments (donated ones included), outputs and scratch are let go of now, before the
        // outputs' event: whoever waits on it may delete the buffers and expect the memory back.
        shared_run->arguments.clear();
        shared_run->outputs.clear();
        shared_run->scratch.reset();
        return status;
      };
      Queue& queue = shared_run->device->queue();
      // A short program whose arguments are ready holds an idle queue now (later work waits
      // for it, as if it were queued) and runs on this thread once the launch mutex is free.
      if (run_inline_ && ready->IsReady() && queue.TryHold()) {
        inline_run = InlineRun{&queue, std::move(execute), ready, done};
      } else {
        queue.EnqueueAfter(ready, [execute = std::move(execute), done](Status status) mutable {
          done->Set(execute(std::move(status)));
        });
      }
      if (options.want_completion_events) result.completion.push_back(done);
    }
  }
  if (inline_run.has_value()) {
    Status status = inline_run->execute(inline_run->ready->status());
    inline_run->queue->Release();
    // After the queue is free: what waits on the outputs may use the queue at once.
    inline_run->done->Set(std::move(status));
  }
  return result;
}

}  // namespace sim
}  // namespace pjrtkit

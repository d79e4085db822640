// AsyncTrackingEvent: a device's marker of asynchronous work, for profilers.
#ifndef PJRTKIT_XLA_PLUGIN_CLIENT_ASYNC_TRACKING_EVENT_H_
#define PJRTKIT_XLA_PLUGIN_CLIENT_ASYNC_TRACKING_EVENT_H_

namespace pjrtkit {

// What Device::CreateAsyncTrackingEvent returns (PJRT_Device_CreateAsyncTrackingEvent): the
// device tracks the work it describes from creation until destruction
// (PJRT_AsyncTrackingEvent_Destroy). Owned by the framework's handle.
class AsyncTrackingEvent {
 public:
  virtual ~AsyncTrackingEvent() = default;
};

}  // namespace pjrtkit

#endif  // PJRTKIT_XLA_PLUGIN_CLIENT_ASYNC_TRACKING_EVENT_H_

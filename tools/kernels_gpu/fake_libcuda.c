// A stand-in libcuda.so.1 for tools/kernels_gpu/ptxas_local.py: just enough CUDA driver for Mosaic
// GPU's compile step (MosaicGpuCompile in jax's xla_cuda_plugin.so) to pick sm_90a on a machine
// without a GPU. The plugin dlopens libcuda.so.1 and, before it runs ptxas, only asks for the
// current context's device and that device's compute capability. Everything after ptxas (the
// host-side JIT, loading the kernel) fails without a real driver, and the tool expects that.
//
// Built by the tool: cc -shared -fPIC -O1 -o libcuda.so.1 fake_libcuda.c

typedef int CUresult;  // 0 is CUDA_SUCCESS
typedef int CUdevice;

enum {
  kComputeCapabilityMajor = 75,  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  kComputeCapabilityMinor = 76,  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
};

// The current context's device: always device 0.
CUresult cuCtxGetDevice(CUdevice* device) {
  *device = 0;
  return 0;
}

// Compute capability 9.0 (an H100 / H200); every other attribute reads 0.
CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  (void)device;
  *value = attribute == kComputeCapabilityMajor ? 9 : 0;
  return 0;
}

// Error texts, in case the plugin formats a driver error.
CUresult cuGetErrorName(CUresult error, const char** name) {
  (void)error;
  *name = "FAKE_LIBCUDA_ERROR";
  return 0;
}

CUresult cuGetErrorString(CUresult error, const char** text) {
  (void)error;
  *text = "fake libcuda.so.1 (tools/kernels_gpu/fake_libcuda.c): no CUDA driver here";
  return 0;
}

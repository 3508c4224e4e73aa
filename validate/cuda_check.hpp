// Fail-fast checks for CUDA and NCCL calls in the measurement harness: the call's text, file:line
// and the library's error string, then exit 1 (a failed measurement must never look like data).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>
#include <cstdio>
#include <cstdlib>

#define STEPCAST_CUDA_CHECK(call)                                                                                   \
  do {                                                                                                              \
    const cudaError_t stepcast_err_ = (call);                                                                       \
    if (stepcast_err_ != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(stepcast_err_)); \
      std::exit(1);                                                                                                 \
    }                                                                                                               \
  } while (false)

#define STEPCAST_NCCL_CHECK(call)                                                                                   \
  do {                                                                                                              \
    const ncclResult_t stepcast_res_ = (call);                                                                      \
    if (stepcast_res_ != ncclSuccess) {                                                                             \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(stepcast_res_)); \
      std::exit(1);                                                                                                 \
    }                                                                                                               \
  } while (false)

# cutool/module.mk: support for the bin/ tools, not part of the library: the tool frame (RunTool),
# the GPU health check with its NVML queries and memory pattern kernels. Its archive
# libcuctx-cutool.a is linked into bin/ and tests only; it is not in libcuctx.so and its headers
# are not installed.
cutool_SRCS  := tool.cc nvml.cc health.cc alloc-stress.cc
cutool_CU    := health-kernels.cu
cutool_TESTS := health-test.cc alternating-rounds-test.cc

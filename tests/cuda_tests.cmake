# tests/cuda_tests.cmake: the CUDA plugin's tests, included only when the plugin is built.
# test_cuda compares the CUDA plugin with the CPU plugin byte for byte (label gpu; exits 77,
# a skip, without a CUDA device); test_cuda_probe checks the ABI and probe on any machine,
# GPU or not (label cuda). GS_CPU_PLUGIN / GS_CUDA_PLUGIN may name other builds of them.
if(NOT DEFINED GS_CPU_PLUGIN)
  set(GS_CPU_PLUGIN $<TARGET_FILE:gsmooth_cpu>)
endif()
if(NOT DEFINED GS_CUDA_PLUGIN)
  set(GS_CUDA_PLUGIN $<TARGET_FILE:gsmooth_cuda>)
endif()

add_executable(test_cuda ${CMAKE_CURRENT_LIST_DIR}/test_cuda.c)
target_link_libraries(test_cuda PRIVATE gs_plugin_abi)
target_link_libraries(test_cuda PRIVATE PkgConfig::CHECK ${CMAKE_DL_LIBS})
add_dependencies(test_cuda gsmooth_cpu gsmooth_cuda)
add_test(NAME cuda_vs_cpu COMMAND $<TARGET_FILE:test_cuda> ${GS_CPU_PLUGIN} ${GS_CUDA_PLUGIN})
set_tests_properties(cuda_vs_cpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77
  ENVIRONMENT "CK_FORK=no")

# The float32 work (smoothing to float32, float64 integrals, device strips) against the C
# reference, byte for byte (label gpu; 77 without a device). Static cudart makes the
# device-memory strips' allocations.
find_package(CUDAToolkit REQUIRED)
add_executable(test_cuda_float ${CMAKE_CURRENT_LIST_DIR}/test_cuda_float.c)
target_link_libraries(test_cuda_float PRIVATE gs_plugin_abi gs_kernels CUDA::cudart_static
  PkgConfig::CHECK ${CMAKE_DL_LIBS})
add_dependencies(test_cuda_float gsmooth_cuda)
add_test(NAME cuda_float_vs_reference COMMAND $<TARGET_FILE:test_cuda_float> ${GS_CUDA_PLUGIN})
set_tests_properties(cuda_float_vs_reference PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77
  ENVIRONMENT "CK_FORK=no")

# The device proof behind the registers kernel's fast arithmetic (label gpu; 77 without a device).
add_executable(test_cuda_arith ${CMAKE_CURRENT_LIST_DIR}/test_cuda_arith.cu)
target_link_libraries(test_cuda_arith PRIVATE gs_cuda_kernels gs_kernels) # gs_kernels: the C reference
set_target_properties(test_cuda_arith PROPERTIES CUDA_RUNTIME_LIBRARY Static)
add_test(NAME cuda_fast_arith COMMAND $<TARGET_FILE:test_cuda_arith>)
set_tests_properties(cuda_fast_arith PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)

# The summed-area table on device memory in tall strips (hundreds of bands), against the reference.
add_executable(test_cuda_integral ${CMAKE_CURRENT_LIST_DIR}/test_cuda_integral.cu)
target_link_libraries(test_cuda_integral PRIVATE gs_cuda_kernels gs_kernels)
set_target_properties(test_cuda_integral PROPERTIES CUDA_RUNTIME_LIBRARY Static)
add_test(NAME cuda_integral_tall COMMAND $<TARGET_FILE:test_cuda_integral>)
set_tests_properties(cuda_integral_tall PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)

add_executable(test_cuda_probe ${CMAKE_CURRENT_LIST_DIR}/test_cuda_probe.c)
target_link_libraries(test_cuda_probe PRIVATE gs_plugin_abi)
target_link_libraries(test_cuda_probe PRIVATE ${CMAKE_DL_LIBS})
add_dependencies(test_cuda_probe gsmooth_cuda)
add_test(NAME cuda_probe COMMAND $<TARGET_FILE:test_cuda_probe> ${GS_CUDA_PLUGIN})
set_tests_properties(cuda_probe PROPERTIES LABELS "cuda")

# The CLI with the CUDA plugin present: explicit --backend cuda, and auto's choice.
add_test(NAME cuda_cli COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cuda_cli_test.sh
  $<TARGET_FILE:gsmooth> ${PROJECT_SOURCE_DIR}/tests/golden)
set_tests_properties(cuda_cli PROPERTIES LABELS "cuda" ENVIRONMENT "GSMOOTH_BACKEND=")

# Device work queued on a caller's stream (gs_strip.stream): calls return before their work,
# results exact, calls on two streams ordered (label gpu; 77 without a device).
add_executable(test_cuda_stream ${CMAKE_CURRENT_LIST_DIR}/test_cuda_stream.c)
target_link_libraries(test_cuda_stream PRIVATE gs_plugin_abi gs_kernels CUDA::cudart_static Threads::Threads
  PkgConfig::CHECK ${CMAKE_DL_LIBS})
add_dependencies(test_cuda_stream gsmooth_cuda)
add_test(NAME cuda_stream COMMAND $<TARGET_FILE:test_cuda_stream> ${GS_CUDA_PLUGIN})
set_tests_properties(cuda_stream PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77
  ENVIRONMENT "CK_FORK=no")

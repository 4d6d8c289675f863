# robust_tests.cmake: the robustness suites, label "robust".
#
# Damaged inputs, output and plugin faults, fuzz regressions, external corpora, reader
# boundaries; included from tests/CMakeLists.txt.
# Paths come from this file's own directory, so it works included from anywhere.
set(GS_ROBUST_TESTS_DIR "${CMAKE_CURRENT_LIST_DIR}")
get_filename_component(GS_ROBUST_ROOT "${GS_ROBUST_TESTS_DIR}/.." ABSOLUTE)
find_package(ZLIB REQUIRED)

# Running a child under limits (address space, wall clock) and signalling it.
add_library(gs_test_limited STATIC ${GS_ROBUST_TESTS_DIR}/run_limited.c)
target_include_directories(gs_test_limited PUBLIC ${GS_ROBUST_TESTS_DIR})

# Test plugins that fail in the ways a real one can.
foreach(fault fault_unavailable fault_strip)
  add_library(test_plugin_${fault} MODULE ${GS_ROBUST_TESTS_DIR}/plugins/${fault}.c)
  target_link_libraries(test_plugin_${fault} PRIVATE gs_plugin_abi)
  set_target_properties(test_plugin_${fault} PROPERTIES PREFIX "" OUTPUT_NAME ${fault}
    C_VISIBILITY_PRESET hidden)
endforeach()

# The damaged corpus, written at test time (deterministic, about 1 s, 2.5 MB).
find_program(GS_ROBUST_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(GS_DAMAGED_DIR "${CMAKE_CURRENT_BINARY_DIR}/damaged")
add_test(NAME damaged_corpus
  COMMAND ${GS_ROBUST_PYTHON} ${GS_ROBUST_TESTS_DIR}/damaged/make_damaged.py ${GS_DAMAGED_DIR})
set_tests_properties(damaged_corpus PROPERTIES LABELS "robust" FIXTURES_SETUP damaged_corpus)

add_executable(test_damaged ${GS_ROBUST_TESTS_DIR}/test_damaged.c)
target_link_libraries(test_damaged PRIVATE gs_test_limited gs_test_support PkgConfig::CHECK)
add_test(NAME damaged COMMAND $<TARGET_FILE:test_damaged> $<TARGET_FILE:gsmooth> ${GS_DAMAGED_DIR})
# A hang guard, not a speed limit: each file runs three gsmooth processes, about 40 s in all
# on 2 cores and 90 s under ASan, which doubled to the old 180 s limit on a loaded machine.
if(GSMOOTH_SANITIZE)
  set(GS_DAMAGED_TIMEOUT 480)
else()
  set(GS_DAMAGED_TIMEOUT 240)
endif()
set_tests_properties(damaged PROPERTIES LABELS "robust" FIXTURES_REQUIRED damaged_corpus
  TIMEOUT ${GS_DAMAGED_TIMEOUT} ENVIRONMENT "GSMOOTH_BACKEND=;GSMOOTH_PLUGIN_PATH=")

add_executable(test_faults ${GS_ROBUST_TESTS_DIR}/test_faults.c)
# backends/plugin_loader.h: the auto threshold the fallback test must reach.
target_include_directories(test_faults PRIVATE ${GS_ROBUST_ROOT}/backends)
target_link_libraries(test_faults PRIVATE gs_plugin_abi gs_common gs_backends)
target_link_libraries(test_faults PRIVATE gs_test_limited gs_test_support PkgConfig::CHECK ZLIB::ZLIB)
add_test(NAME faults COMMAND $<TARGET_FILE:test_faults> $<TARGET_FILE:gsmooth>
  ${GS_ROBUST_TESTS_DIR}/golden $<TARGET_FILE:test_plugin_abi_major2>
  $<TARGET_FILE:test_plugin_no_entry> $<TARGET_FILE:test_plugin_fault_unavailable>
  $<TARGET_FILE:test_plugin_fault_strip>)
set_tests_properties(faults PROPERTIES LABELS "robust" TIMEOUT 180
  ENVIRONMENT "GSMOOTH_BACKEND=;GSMOOTH_PLUGIN_PATH=")

# The fuzz harnesses without libFuzzer: every saved finding and every damaged file through
# the whole decode -> compute -> encode path, and through each decoder alone (any compiler).
add_executable(test_fuzz_regressions
  ${GS_ROBUST_TESTS_DIR}/test_fuzz_regressions.c
  ${GS_ROBUST_ROOT}/fuzz/fuzz_pipeline.c)
target_link_libraries(test_fuzz_regressions PRIVATE gs_pipeline gs_cpu_plugin)
add_test(NAME fuzz_regressions COMMAND $<TARGET_FILE:test_fuzz_regressions>
  ${GS_ROBUST_ROOT}/fuzz/regressions ${GS_DAMAGED_DIR})
set_tests_properties(fuzz_regressions PROPERTIES LABELS "robust" FIXTURES_REQUIRED damaged_corpus
  TIMEOUT 180)
foreach(decoder png pngfast jpeg stb pnm tiff gif bmp tga webp fits npy)
  add_executable(test_fuzz_regressions_${decoder}
    ${GS_ROBUST_TESTS_DIR}/test_fuzz_regressions.c
    ${GS_ROBUST_ROOT}/fuzz/fuzz_decode.c)
  target_compile_definitions(test_fuzz_regressions_${decoder} PRIVATE GS_FUZZ_DECODER=${decoder})
  target_link_libraries(test_fuzz_regressions_${decoder} PRIVATE gs_image_io)
  add_test(NAME fuzz_regressions_${decoder} COMMAND $<TARGET_FILE:test_fuzz_regressions_${decoder}>
    ${GS_ROBUST_ROOT}/fuzz/regressions ${GS_DAMAGED_DIR})
  set_tests_properties(fuzz_regressions_${decoder} PROPERTIES LABELS "robust"
    FIXTURES_REQUIRED damaged_corpus TIMEOUT 180)
endforeach()
# The two PNG readers compared on one file (the pngdiff harnesses and png_conformance).
add_library(gs_png_diff_check STATIC ${GS_ROBUST_ROOT}/fuzz/png_diff_check.c)
target_include_directories(gs_png_diff_check PUBLIC ${GS_ROBUST_ROOT}/fuzz)
target_link_libraries(gs_png_diff_check PUBLIC gs_image_io)
add_executable(test_fuzz_regressions_pngdiff
  ${GS_ROBUST_TESTS_DIR}/test_fuzz_regressions.c ${GS_ROBUST_ROOT}/fuzz/fuzz_png_diff.c)
target_link_libraries(test_fuzz_regressions_pngdiff PRIVATE gs_png_diff_check)
add_test(NAME fuzz_regressions_pngdiff COMMAND $<TARGET_FILE:test_fuzz_regressions_pngdiff>
  ${GS_ROBUST_ROOT}/fuzz/regressions ${GS_DAMAGED_DIR})
set_tests_properties(fuzz_regressions_pngdiff PROPERTIES LABELS "robust"
  FIXTURES_REQUIRED damaged_corpus TIMEOUT 180)
# The writing harness reads every file as a description of a PNG up to 2^20 pixels: the
# saved findings only (the damaged corpus as descriptions would be minutes of deflate).
add_executable(test_fuzz_regressions_pngwrite
  ${GS_ROBUST_TESTS_DIR}/test_fuzz_regressions.c ${GS_ROBUST_ROOT}/fuzz/fuzz_png_writer_diff.c)
target_link_libraries(test_fuzz_regressions_pngwrite PRIVATE gs_png_diff_check ZLIB::ZLIB)
add_test(NAME fuzz_regressions_pngwrite COMMAND $<TARGET_FILE:test_fuzz_regressions_pngwrite>
  ${GS_ROBUST_ROOT}/fuzz/regressions)
set_tests_properties(fuzz_regressions_pngwrite PROPERTIES LABELS "robust" TIMEOUT 180)

# The fast PNG reader against libpng: written PNGs of every kind, the damaged corpus, PNGs
# of other encoders (tests/png/).
add_executable(test_png_decoders ${GS_ROBUST_TESTS_DIR}/test_png_decoders.c)
target_link_libraries(test_png_decoders PRIVATE gs_image_io PkgConfig::PNG PkgConfig::CHECK)
add_test(NAME png_decoders COMMAND $<TARGET_FILE:test_png_decoders> ${GS_DAMAGED_DIR}
  ${GS_ROBUST_TESTS_DIR}/png)
set_tests_properties(png_decoders PROPERTIES LABELS "robust" FIXTURES_REQUIRED damaged_corpus
  TIMEOUT 300)

# The same comparisons with each unfilter variant forced (io/png_unfilter.h; a variant the
# CPU lacks gives the next one down).
foreach(variant scalar sse2 avx2)
  add_test(NAME png_decoders_${variant} COMMAND $<TARGET_FILE:test_png_decoders> ${GS_DAMAGED_DIR}
    ${GS_ROBUST_TESTS_DIR}/png)
  add_test(NAME fuzz_regressions_pngdiff_${variant} COMMAND $<TARGET_FILE:test_fuzz_regressions_pngdiff>
    ${GS_ROBUST_ROOT}/fuzz/regressions ${GS_DAMAGED_DIR})
  add_test(NAME fuzz_regressions_pngwrite_${variant} COMMAND $<TARGET_FILE:test_fuzz_regressions_pngwrite>
    ${GS_ROBUST_ROOT}/fuzz/regressions)
  set_tests_properties(png_decoders_${variant} fuzz_regressions_pngdiff_${variant}
    fuzz_regressions_pngwrite_${variant} PROPERTIES LABELS "robust" TIMEOUT 300
    ENVIRONMENT "GSMOOTH_PNG_UNFILTER=${variant}")
  set_tests_properties(png_decoders_${variant} fuzz_regressions_pngdiff_${variant} PROPERTIES
    FIXTURES_REQUIRED damaged_corpus)
endforeach()

# The fast PNG reader against libpng on PNGs that libpng, OpenCV, PIL, vips and hand-made
# zlib streams write at sizes across each of the reader's buffer and batch boundaries,
# generated at test time (tests/png/conformance.py; vips cases only where vips is installed).
add_executable(test_png_conformance ${GS_ROBUST_TESTS_DIR}/test_png_conformance.c)
target_link_libraries(test_png_conformance PRIVATE gs_png_diff_check)
add_executable(libpng_write ${GS_ROBUST_TESTS_DIR}/png/libpng_write.c)
target_link_libraries(libpng_write PRIVATE PkgConfig::PNG)
if(GS_SYSTEM_PYTHON)
  add_test(NAME png_conformance COMMAND ${GS_SYSTEM_PYTHON} ${GS_ROBUST_TESTS_DIR}/png/conformance.py
    $<TARGET_FILE:test_png_conformance> $<TARGET_FILE:libpng_write>)
  set_tests_properties(png_conformance PROPERTIES LABELS "robust" TIMEOUT 300)
endif()

# The PNG writer's pieces compress as one zlib stream would (level 6, matches 20 and 30 KiB
# back across every piece's start): a too-short priming keeps the pixels, only size shows it.
add_executable(test_png_size ${GS_ROBUST_TESTS_DIR}/test_png_size.c)
target_link_libraries(test_png_size PRIVATE gs_image_io PkgConfig::CHECK ZLIB::ZLIB)
add_test(NAME png_size COMMAND $<TARGET_FILE:test_png_size>)
set_tests_properties(png_size PROPERTIES LABELS "robust" TIMEOUT 120)

# A fast-reader refusal of a regular file falls back to libpng, with one note; a pipe keeps
# the first verdict (an LD_PRELOAD library makes one isal_inflate call fail).
add_library(test_inflate_fault MODULE ${GS_ROBUST_TESTS_DIR}/preload/inflate_fault.c)
target_link_libraries(test_inflate_fault PRIVATE PkgConfig::ISAL ${CMAKE_DL_LIBS})
set_target_properties(test_inflate_fault PROPERTIES PREFIX "")
if(GS_SYSTEM_PYTHON AND NOT GSMOOTH_SANITIZE)
  add_test(NAME png_fallback COMMAND ${GS_SYSTEM_PYTHON} ${GS_ROBUST_TESTS_DIR}/png/fallback_check.py
    $<TARGET_FILE:gsmooth> $<TARGET_FILE:test_inflate_fault>)
  set_tests_properties(png_fallback PROPERTIES LABELS "robust" TIMEOUT 120)
endif()

# Pipes and FIFOs as input and output (needs the damaged corpus for its valid files).
add_executable(test_streams ${GS_ROBUST_TESTS_DIR}/test_streams.c)
target_link_libraries(test_streams PRIVATE gs_test_limited PkgConfig::CHECK ZLIB::ZLIB)
add_test(NAME streams COMMAND $<TARGET_FILE:test_streams> $<TARGET_FILE:gsmooth>
  ${GS_ROBUST_TESTS_DIR}/golden ${GS_DAMAGED_DIR})
set_tests_properties(streams PROPERTIES LABELS "robust" FIXTURES_REQUIRED damaged_corpus
  TIMEOUT 300 ENVIRONMENT "GSMOOTH_BACKEND=;GSMOOTH_PLUGIN_PATH=")

# JPEG and PSD bytes across each input buffer's edge (-1, 0, +1), file and pipe, against PIL.
if(GS_SYSTEM_PYTHON)
  add_test(NAME reader_boundaries COMMAND ${GS_SYSTEM_PYTHON} ${GS_ROBUST_TESTS_DIR}/streams/reader_boundaries.py
    $<TARGET_FILE:gsmooth>)
  set_tests_properties(reader_boundaries PROPERTIES LABELS "robust" TIMEOUT 120)
endif()

# The external corpora (tests/external: PngSuite, Pillow's images with bmpsuite, libjpeg-turbo's
# and libtiff's): each file against its format's reference decoder (python3-opencv, PIL,
# tifffile, libtiff-tools), and the whole set decoded twice under other heap contents.
if(GS_SYSTEM_PYTHON)
  add_test(NAME external_corpora COMMAND ${GS_SYSTEM_PYTHON} ${GS_ROBUST_TESTS_DIR}/external/check_external.py
    $<TARGET_FILE:gsmooth>)
  set_tests_properties(external_corpora PROPERTIES LABELS "robust" TIMEOUT 300)
  add_test(NAME external_heap_contents COMMAND ${GS_SYSTEM_PYTHON} ${GS_ROBUST_TESTS_DIR}/external/corpus_batch.py
    $<TARGET_FILE:gsmooth> heap)
  set_tests_properties(external_heap_contents PROPERTIES LABELS "robust" TIMEOUT 300)
endif()

# A 600-file batch, good and damaged mixed, three files in flight (scripts/test_tsan.sh runs
# the same under ThreadSanitizer).
add_test(NAME batch_load COMMAND sh ${GS_ROBUST_TESTS_DIR}/batch_load_test.sh $<TARGET_FILE:gsmooth> 3)
set_tests_properties(batch_load PROPERTIES LABELS "robust" TIMEOUT 300
  ENVIRONMENT "GSMOOTH_BACKEND=;GSMOOTH_PLUGIN_PATH=")

# One static library per layer, stepcast_<layer>, from src/<layer>/*.cpp (STYLE.md B2).
set(STEPCAST_LAYERS "" CACHE INTERNAL "")

function(stepcast_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion)
  # g++ 12 reports array-bounds/stringop false positives inside libstdc++ when it inlines
  # nlohmann::json with JSON_DIAGNOSTICS (GCC bug 105651 family); they are not in our code.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-array-bounds -Wno-stringop-overflow -Wno-stringop-overread
                                             -Wno-restrict)
  endif()
  if(STEPCAST_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(STEPCAST_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                                             -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(STEPCAST_FUZZ)
    # Coverage instrumentation for libFuzzer in every library the fuzz targets reach.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

function(stepcast_layer layer)
  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${layer}/*.cpp)
  add_library(stepcast_${layer} STATIC ${sources})
  target_include_directories(stepcast_${layer} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                               PRIVATE ${PROJECT_SOURCE_DIR}/src/${layer})
  # Keep nlohmann's JSON-pointer diagnostics on: a second net under our own JsonReader paths.
  target_compile_definitions(stepcast_${layer} PUBLIC JSON_DIAGNOSTICS=1)
  stepcast_warnings(stepcast_${layer})
  set_target_properties(stepcast_${layer} PROPERTIES UNITY_BUILD ${STEPCAST_UNITY})
  set(STEPCAST_LAYERS ${STEPCAST_LAYERS} stepcast_${layer} CACHE INTERNAL "")
endfunction()

# Links a layer to the layers (or third-party targets) below it, if that layer exists yet.
function(stepcast_layer_deps layer)
  if(NOT TARGET stepcast_${layer})
    return()
  endif()
  foreach(dep IN LISTS ARGN)
    if(TARGET stepcast_${dep})
      target_link_libraries(stepcast_${layer} PUBLIC stepcast_${dep})
    elseif(TARGET ${dep})
      target_link_libraries(stepcast_${layer} PUBLIC ${dep})
    endif()
  endforeach()
endfunction()

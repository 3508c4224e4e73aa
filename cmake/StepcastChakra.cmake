# The Chakra execution-trace schema (src/report/chakra/et_def.proto) compiled by protoc into a
# small library the report layer links. Debian: libprotobuf-dev and protobuf-compiler; found with
# CMake's FindProtobuf. protoc runs when CMake configures (and again whenever the schema changes),
# so the generated header exists for clang-tidy, which reads compile commands without building.
find_package(Protobuf 3.21 REQUIRED)
if(NOT Protobuf_PROTOC_EXECUTABLE)
  message(FATAL_ERROR "protoc was not found (Debian: protobuf-compiler)")
endif()
set(STEPCAST_CHAKRA_PROTO ${PROJECT_SOURCE_DIR}/src/report/chakra/et_def.proto)
set(STEPCAST_CHAKRA_GENERATED ${PROJECT_BINARY_DIR}/generated/chakra)
file(MAKE_DIRECTORY ${STEPCAST_CHAKRA_GENERATED})
execute_process(COMMAND ${Protobuf_PROTOC_EXECUTABLE} --cpp_out=${STEPCAST_CHAKRA_GENERATED}
                        --proto_path=${PROJECT_SOURCE_DIR}/src/report/chakra ${STEPCAST_CHAKRA_PROTO}
                RESULT_VARIABLE protoc_status ERROR_VARIABLE protoc_errors)
if(NOT protoc_status EQUAL 0)
  message(FATAL_ERROR "protoc failed on ${STEPCAST_CHAKRA_PROTO}: ${protoc_errors}")
endif()
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${STEPCAST_CHAKRA_PROTO})

# Generated code: not held to stepcast's warnings, and included as a system header so that its
# warnings stay out of stepcast's own sources too.
add_library(stepcast_chakra_proto STATIC ${STEPCAST_CHAKRA_GENERATED}/et_def.pb.cc)
target_include_directories(stepcast_chakra_proto SYSTEM PUBLIC ${STEPCAST_CHAKRA_GENERATED})
target_link_libraries(stepcast_chakra_proto PUBLIC protobuf::libprotobuf)
if(STEPCAST_SANITIZE)
  target_compile_options(stepcast_chakra_proto PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
endif()

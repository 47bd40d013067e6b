# cw_add_head_plugin(NAME SOURCE file.cpp [DATA files...]): a clause-head Qt plugin built
# into ${PROJECT_BINARY_DIR}/plugins with its data files beside it. The head classes live in
# app/heads (also compiled into cw_app_core, so the app works without the plugin folder);
# the plugin compiles them again, position-independent, with Qt Core only.
find_package(LibLZMA REQUIRED)
file(GLOB CW_HEAD_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/app/heads/*.cpp)

function(cw_add_head_plugin name)
  cmake_parse_arguments(ARG "" "SOURCE" "DATA" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCE} ${CW_HEAD_SOURCES} ${PROJECT_SOURCE_DIR}/app/review/review_types.cpp)
  set_target_properties(${name} PROPERTIES AUTOMOC ON PREFIX "" OUTPUT_NAME ${name}
                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/plugins)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE Qt6::Core LibLZMA::LibLZMA)
  cw_project_target(${name})
  foreach(data ${ARG_DATA})
    get_filename_component(data_name ${data} NAME)
    add_custom_command(TARGET ${name} POST_BUILD
                       COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_CURRENT_SOURCE_DIR}/${data}
                               ${PROJECT_BINARY_DIR}/plugins/${data_name})
    install(FILES ${data} DESTINATION lib/clausewright/plugins)
  endforeach()
  install(TARGETS ${name} LIBRARY DESTINATION lib/clausewright/plugins)
endfunction()

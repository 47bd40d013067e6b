# cw_add_head_plugin(NAME SOURCES a.cpp ... [DATA files...] [LIBS targets...]): a clause-head
# Qt plugin built into ${PROJECT_BINARY_DIR}/plugins, where the build tree's programs look, with
# its data files beside it; installed to lib/clausewright/plugins. A plugin compiles only its own
# code: the SDK types (cw_head_sdk) and, for the fast heads, the shared head machinery
# (cw_head_machinery, LIBS) are shared libraries loaded once in the process.
include_guard(GLOBAL)

function(cw_add_head_plugin name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DATA;LIBS" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  set_target_properties(${name} PROPERTIES AUTOMOC ON PREFIX "" OUTPUT_NAME ${name}
                        LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/plugins
                        # lib/clausewright/plugins/x.so finds lib/clausewright/libcw_*.so
                        INSTALL_RPATH "$ORIGIN/..")
  target_link_libraries(${name} PRIVATE cw_head_sdk ${ARG_LIBS})
  cw_project_target(${name})
  add_dependencies(cw_builtin_plugins ${name})
  foreach(data ${ARG_DATA})
    get_filename_component(data_name ${data} NAME)
    # A file of the target, not a post-build step: a retrained model is copied even when the
    # plugin's code did not change.
    set(copy ${PROJECT_BINARY_DIR}/plugins/${data_name})
    add_custom_command(OUTPUT ${copy}
                       COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_CURRENT_SOURCE_DIR}/${data} ${copy}
                       DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${data} VERBATIM)
    target_sources(${name} PRIVATE ${copy})
    install(FILES ${data} DESTINATION lib/clausewright/plugins)
  endforeach()
  install(TARGETS ${name} LIBRARY DESTINATION lib/clausewright/plugins)
endfunction()

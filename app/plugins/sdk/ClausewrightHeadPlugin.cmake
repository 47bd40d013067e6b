# clausewright_add_head_plugin(TARGET SOURCES a.cpp ...): a clause-head Qt plugin (a MODULE
# library, moc run for Q_PLUGIN_METADATA) linked to Clausewright::HeadSDK. Put the built file,
# its JSON-named data beside it, in ~/.local/share/Clausewright/Clausewright/plugins (or pass
# the folder with clausewright-cli --plugins).
function(clausewright_add_head_plugin target)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES AUTOMOC ON PREFIX "")
  target_link_libraries(${target} PRIVATE Clausewright::HeadSDK)
endfunction()

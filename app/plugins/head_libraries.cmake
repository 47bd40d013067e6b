# cw_head_sdk: what crosses the head-plugin boundary (the review types, the head interface),
# the library an outside head links through find_package(Clausewright COMPONENTS HeadSDK).
# cw_head_machinery: features, models, trainer, evaluation and dataset reader of the fast heads
# (app/heads), used by the app (train-heads, eval-heads, the playbook's category list) and by
# the fast head plugins. Both are shared so each is in the process once, whatever loads it.
set(CW_HEAD_SDK_SOURCES ${PROJECT_SOURCE_DIR}/app/review/review_types.cpp
    ${PROJECT_SOURCE_DIR}/app/plugins/clause_head.cpp)
set(CW_HEAD_SDK_HEADERS app/plugins/clause_head.h app/plugins/llm_head.h app/review/review_types.h
    app/review/review_events.h app/playbook/playbook.h app/generation/text_generator.h
    engine/chat/chat_template.h engine/common/result.h)

add_library(cw_head_sdk SHARED ${CW_HEAD_SDK_SOURCES})
set_target_properties(cw_head_sdk PROPERTIES EXPORT_NAME HeadSDK INSTALL_RPATH "$ORIGIN")
target_include_directories(cw_head_sdk PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
                           $<INSTALL_INTERFACE:include/clausewright>)
target_link_libraries(cw_head_sdk PUBLIC Qt6::Core)
target_compile_features(cw_head_sdk PUBLIC cxx_std_20)
cw_project_target(cw_head_sdk)

file(GLOB CW_HEAD_MACHINERY_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/app/heads/*.cpp)
add_library(cw_head_machinery SHARED ${CW_HEAD_MACHINERY_SOURCES})
set_target_properties(cw_head_machinery PROPERTIES INSTALL_RPATH "$ORIGIN")
target_link_libraries(cw_head_machinery PUBLIC cw_head_sdk Qt6::Core PRIVATE LibLZMA::LibLZMA)
cw_project_target(cw_head_machinery)
target_precompile_headers(cw_head_machinery PRIVATE ${CW_QT_CORE_PCH_HEADERS})

# cw_llm_machinery: the language model head's planning, prompts, answer parsing and merge
# (app/llm_review), used by the LLM head plugin and by eval-heads. It links no engine: what
# needs one (loading a model, rendering a chat template, the answer grammar) stays in the host
# and is lent to the plugin through LlmHeadInput (app/plugins/llm_head.h).
set(CW_LLM_MACHINERY_SOURCES)
foreach(name category_questions model_question question_planner question_prompt
        streaming_note_reader model_review finding_merge)
  list(APPEND CW_LLM_MACHINERY_SOURCES ${PROJECT_SOURCE_DIR}/app/llm_review/${name}.cpp)
endforeach()
add_library(cw_llm_machinery SHARED ${CW_LLM_MACHINERY_SOURCES})
set_target_properties(cw_llm_machinery PROPERTIES INSTALL_RPATH "$ORIGIN")
target_link_libraries(cw_llm_machinery PUBLIC cw_head_sdk Qt6::Core PRIVATE nlohmann_json::nlohmann_json)
cw_project_target(cw_llm_machinery)

# The program's copies (default component) and the SDK's (HeadSDK: the library, its headers
# and the CMake package; `cmake --install BUILD --component HeadSDK --prefix P`).
install(TARGETS cw_head_sdk cw_head_machinery cw_llm_machinery LIBRARY DESTINATION lib/clausewright)
install(TARGETS cw_head_sdk EXPORT ClausewrightHeadSDKTargets
        LIBRARY DESTINATION lib/clausewright COMPONENT HeadSDK)
foreach(header ${CW_HEAD_SDK_HEADERS})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION include/clausewright/${dir}
          COMPONENT HeadSDK)
endforeach()
install(EXPORT ClausewrightHeadSDKTargets NAMESPACE Clausewright::
        DESTINATION lib/cmake/Clausewright COMPONENT HeadSDK)
include(CMakePackageConfigHelpers)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/sdk/ClausewrightConfig.cmake.in
    ${CMAKE_CURRENT_BINARY_DIR}/ClausewrightConfig.cmake INSTALL_DESTINATION lib/cmake/Clausewright)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/ClausewrightConfigVersion.cmake
    VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ClausewrightConfig.cmake
        ${CMAKE_CURRENT_BINARY_DIR}/ClausewrightConfigVersion.cmake
        ${CMAKE_CURRENT_LIST_DIR}/sdk/ClausewrightHeadPlugin.cmake
        DESTINATION lib/cmake/Clausewright COMPONENT HeadSDK)

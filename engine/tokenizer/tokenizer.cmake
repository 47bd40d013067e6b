# Included by engine/CMakeLists.txt. NFC normalization (tokenizer.json "normalizer": NFC) comes from ICU when it is there.
# Without it the tokenizer skips normalization and says so when a tokenizer asks for it.
pkg_check_modules(CW_ICU_UC QUIET IMPORTED_TARGET GLOBAL icu-uc)
if(CW_ICU_UC_FOUND)
  target_link_libraries(cw_engine PUBLIC PkgConfig::CW_ICU_UC)
  target_compile_definitions(cw_engine PRIVATE CW_HAVE_ICU=1)
else()
  message(STATUS "ICU (icu-uc) not found: the tokenizer will not apply NFC normalization")
endif()

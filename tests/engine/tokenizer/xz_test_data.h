#pragma once

#include "engine/common/result.h"

#include <string>

namespace cw::test {

// The contents of an .xz test-data file, decompressed with liblzma.
Result<std::string> readXzFile(const std::string& path);

// Decompresses `xzPath` into `outputPath` unless it is already there with the same size
// stamp; returns outputPath. Used to unpack the Qwen3 tokenizer.json into the build dir.
Result<std::string> unpackXzFile(const std::string& xzPath, const std::string& outputPath);

} // namespace cw::test

#pragma once

#include "engine/common/result.h"
#include "engine/model_files/model_presets.h"

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>

namespace cw::cli {

// What `synth` and `convert` print while and after writing a GGUF file: progress on stderr
// in steps of ten percent, then one line naming the file, its size, time and type mix.
class GgufWriteReport {
public:
    explicit GgufWriteReport(const char* command)
        : m_command(command)
    {
    }

    std::function<void(std::size_t, std::size_t)> progress()
    {
        return [this](std::size_t done, std::size_t total) {
            const int percent = total == 0 ? 100 : int(done * 100 / total);
            if (percent / 10 != m_lastPercent / 10) {
                std::fprintf(stderr, "\r%s: %3d%%", m_command, percent);
                m_lastPercent = percent;
            }
        };
    }

    // The process exit code: 0 when written, 1 with the error on stderr otherwise.
    int finish(const std::string& path, const Result<engine::SynthSummary>& summary) const
    {
        std::fprintf(stderr, "\n");
        if (!summary) {
            std::fprintf(stderr, "%s: %s\n", m_command, summary.error().message.c_str());
            return 1;
        }
        const double seconds
            = std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
        std::printf("%s: %zu tensors, %.3f GiB in %.1f s (", path.c_str(), summary->tensorCount,
            double(summary->fileBytes) / double(1ull << 30), seconds);
        bool first = true;
        for (const auto& [type, count] : summary->tensorsPerType) {
            std::printf("%s%s x%zu", first ? "" : ", ", type.c_str(), count);
            first = false;
        }
        std::printf(")\n");
        return 0;
    }

private:
    const char* m_command;
    std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
    int m_lastPercent = -1;
};

} // namespace cw::cli

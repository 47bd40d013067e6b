#include "app/test_runner/language_runner.h"

#include "app/test_runner/cpp_test_runner.h"
#include "app/test_runner/go_test_runner.h"
#include "app/test_runner/node_test_runner.h"
#include "app/test_runner/python_test_runner.h"

namespace cw {

std::unique_ptr<LanguageRunner> makeLanguageRunner(const QString& language)
{
    if (language == "python")
        return std::make_unique<PythonTestRunner>();
    if (language == "cpp")
        return std::make_unique<CppTestRunner>();
    if (language == "javascript" || language == "typescript")
        return std::make_unique<NodeTestRunner>(language);
    if (language == "go")
        return std::make_unique<GoTestRunner>();
    return nullptr;
}

SandboxLimits buildLimits(const SandboxLimits& base)
{
    SandboxLimits limits = base;
    limits.cpuSeconds = std::max(base.cpuSeconds, 120);
    limits.wallSeconds = std::max(base.wallSeconds, 180.0);
    return limits;
}

SandboxResult runSandboxed(const Sandbox& sandbox, const QString& dir, const QStringList& argv,
    const SandboxLimits& limits, QString& limitMessage, const CancelFlag& cancelled,
    const QList<QPair<QString, QString>>& environment)
{
    SandboxCommand command;
    command.workDir = dir.toStdString();
    for (const QString& a : argv)
        command.argv.push_back(a.toStdString());
    for (const auto& [name, value] : environment)
        command.environment.push_back({ name.toStdString(), value.toStdString() });
    auto result = sandbox.run(command, limits, cancelled);
    if (!result) {
        limitMessage = QString::fromStdString(result.error().message);
        return {};
    }
    if (const std::string limit = result->limitMessage(limits);
        !limit.empty() && limitMessage.isEmpty())
        limitMessage = QString::fromStdString(limit);
    if (cancelled && cancelled() && limitMessage.isEmpty())
        limitMessage = QStringLiteral("cancelled");
    return *result;
}

} // namespace cw

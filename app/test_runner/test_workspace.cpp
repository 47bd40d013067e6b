#include "app/test_runner/test_workspace.h"

#include "app/test_runner/code_language.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QMap>
#include <QRegularExpression>
#include <mutex>

namespace cw {

namespace {

Result<void> writeFile(const QString& path, const QString& text)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
        return makeError(path.toStdString() + ": " + file.errorString().toStdString());
    file.write(text.toUtf8());
    return {};
}

} // namespace

Result<QString> probeToolchain(const Sandbox& sandbox, const QString& language)
{
    static std::mutex mutex;
    static QMap<QString, Result<QString>> known;
    std::lock_guard guard(mutex);
    if (auto it = known.find(language); it != known.end())
        return *it;
    auto runner = makeLanguageRunner(language);
    if (!runner)
        return makeError("no test runner for '" + language.toStdString() + "'");
    Result<QString> found = runner->probe(sandbox);
    known.insert(language, found);
    return found;
}

QString TestWorkspace::safeCodeFileName(const QString& language, const QString& name)
{
    QString base = QFileInfo(name).completeBaseName();
    base.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_]")), QStringLiteral("_"));
    if (base.isEmpty() || base[0].isDigit())
        base.prepend(QStringLiteral("code_under_test"));
    if (base.startsWith(QLatin1String("test_")) || base.startsWith(QLatin1String("cw_")))
        base.prepend(QStringLiteral("m_")); // never the test file's or the runner's name
    QString suffix = QFileInfo(name).suffix().toLower();
    if (detectLanguage("x." + suffix, {}) != language
        || (language == "typescript" && suffix.isEmpty()))
        suffix = languageExtension(language).mid(1);
    return base.left(64) + '.' + suffix;
}

Result<std::unique_ptr<TestWorkspace>> TestWorkspace::create(std::shared_ptr<const Sandbox> sandbox,
    const QString& language, const QString& codeFileName, const QString& code)
{
    std::unique_ptr<TestWorkspace> workspace(new TestWorkspace);
    workspace->m_runner = makeLanguageRunner(language);
    if (!workspace->m_runner)
        return makeError("tests cannot be run for " + languageTitle(language).toStdString()
            + " (runners: Python, C++, JavaScript, TypeScript, Go)");
    auto toolchain = probeToolchain(*sandbox, language);
    if (!toolchain)
        return makeError(languageTitle(language).toStdString()
            + " tests cannot run here: " + toolchain.error().message);
    if (!workspace->m_dir.isValid())
        return makeError(
            "cannot make a temporary folder: " + workspace->m_dir.errorString().toStdString());
    workspace->m_sandbox = std::move(sandbox);
    workspace->m_language = language;
    workspace->m_toolchain = *toolchain;
    TestFiles& files = workspace->m_files;
    files.dir = workspace->m_dir.path();
    files.codeFile = safeCodeFileName(language, codeFileName);
    files.testFile = workspace->m_runner->testFileName(files.codeFile, code);
    files.code = code;
    if (auto written = writeFile(QDir(files.dir).filePath(files.codeFile), code); !written)
        return written.error();
    return workspace;
}

bool TestWorkspace::useTestFileName(const QString& name)
{
    static const QRegularExpression kSafe(QStringLiteral("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$"));
    if (!kSafe.match(name).hasMatch() || name == m_files.codeFile
        || name.startsWith(QLatin1String("cw_")) || name.startsWith(QLatin1String(".")))
        return false;
    // The runner's own suffix (node picks .mjs or .js from the code, C++ compiles a .cpp).
    const bool fits = QFileInfo(name).suffix() == QFileInfo(m_files.testFile).suffix()
        && (m_language != QLatin1String("go") || name.endsWith(QLatin1String("_test.go")));
    if (!fits)
        return false;
    // Python imports a test module by its name: one that is not an identifier cannot be.
    if (m_language == QLatin1String("python")
        && !QRegularExpression(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*\\.py$"))
                .match(name)
                .hasMatch())
        return false;
    if (name != m_files.testFile) {
        m_files.testFile = name;
        m_haveBuild = false;
    }
    return true;
}

TestRunResult TestWorkspace::run(
    const QString& tests, const QString& onlyTest, const CancelFlag& cancelled)
{
    QElapsedTimer timer;
    timer.start();
    TestRunResult result;
    result.language = m_language;
    result.toolchain = m_toolchain;
    if (!m_haveBuild || tests != m_builtTests) {
        TestRunResult build;
        if (auto written = writeFile(QDir(m_files.dir).filePath(m_files.testFile), tests);
            !written) {
            build.limitMessage = QString::fromStdString(written.error().message);
        } else if (auto prepared = Sandbox::prepareWorkDir(m_files.dir.toStdString()); !prepared) {
            build.limitMessage = QString::fromStdString(prepared.error().message);
        } else {
            m_runner->build(*m_sandbox, m_files, build, cancelled);
        }
        m_build = build;
        m_builtTests = tests;
        m_haveBuild = true;
    }
    result.built = m_build.built;
    result.buildOutput = m_build.buildOutput;
    result.limitMessage = m_build.limitMessage;
    if (result.built) {
        (void)Sandbox::prepareWorkDir(m_files.dir.toStdString());
        m_runner->execute(*m_sandbox, m_files, onlyTest, result, cancelled);
    }
    result.seconds = double(timer.elapsed()) / 1000.0;
    return result;
}

} // namespace cw

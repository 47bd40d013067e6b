// `clausewright-cli review FILE`: the headless review. Reads the contract, finds its
// clauses, runs the heads and the playbook, and writes the report (JSON, Markdown, HTML,
// PDF) to --out or to standard output, and saves the review to the history the GUI shares
// (--db another file, --no-save not at all). With --model (or --server) the language model
// reviews the fast heads' candidate clauses too, unless --heads fast says otherwise; its
// progress ("model review n/m") and, with --show-notes, its note on each question go to
// standard error. --redline writes the contract as a DOCX with the playbook's wording as
// tracked changes and comments giving the reasons.
#include "app/cli/cli_command.h"
#include "app/cli/cli_usage.h"
#include "app/generation/remote_server.h"
#include "app/history/history_database.h"
#include "app/playbook/playbook.h"
#include "app/redline/redline_export.h"
#include "app/report/report_exporter.h"
#include "app/review/review_pipeline.h"

#include <CLI/CLI.hpp>
#include <QFileInfo>
#include <QGuiApplication>
#include <QMap>
#include <cstdio>
#include <memory>
#include <vector>

namespace {

int runReview(std::span<char*> args)
{
    CLI::App app { "Review a contract with the clause heads and a playbook", "review" };
    cw::cli::showDefaultsInHelp(app);
    std::string file, model, playbook, heads, format = "json", out, password, dbPath, redline;
    bool textOnly = false, showNotes = false, noSave = false;
    int threads = 0;
    std::string device = "cpu", precision = "bf16";
    std::int64_t context = 0;
    app.add_option("FILE", file, "contract: PDF, DOCX or text")->required();
    app.add_option("--model", model, "GGUF file or Hugging Face folder for the LLM head");
    app.add_option("--playbook", playbook, "playbook YAML/JSON (default: the bundled one)");
    app.add_option("--heads", heads,
           "which heads run: fast, llm or all (default: all with --model or --server, else "
           "fast)")
        ->check(CLI::IsMember({ "fast", "llm", "all" }));
    app.add_option("--format", format, "json, md, html or pdf")
        ->check(CLI::IsMember({ "json", "md", "markdown", "html", "pdf" }));
    app.add_option(
        "--out", out, "write the report here (default: standard output; pdf needs --out)");
    app.add_option("--redline", redline,
        "also write the contract as a DOCX with the playbook's preferred wording as tracked "
        "changes (author Clausewright) and a comment with the risk and reason on each");
    app.add_option("--password", password,
        "password of an encrypted PDF (or set CW_PDF_PASSWORD, which other users cannot see in "
        "the process list)");
    app.add_flag(
        "--text-only", textOnly, "read FILE as plain text, unchanged (offsets refer to it)");
    app.add_option("--threads", threads, "CPU threads for the model (0: all)");
    app.add_option("--device", device, "where the model runs: cpu, cuda, cuda:N or auto");
    double gpuMemory = 0.0;
    cw::cli::addGpuMemoryOption(app, gpuMemory);
    app.add_option("--precision", precision,
           "the model's arithmetic: f32 (the reference), tf32 or bf16 (fastest)")
        ->check(CLI::IsMember({ "f32", "tf32", "bf16" }));
    app.add_option(
        "--context", context, "tokens per sequence (0: the model's; 32768 at most on a GPU)");
    app.add_flag("--show-notes", showNotes, "print the model's note on each question to stderr");
    app.add_option("--db", dbPath,
        "history database to save the review in (default: the GUI's, "
            + cw::HistoryDatabase::defaultPath().toStdString() + ")");
    app.add_flag("--no-save", noSave, "do not save the review in the history");
    std::vector<std::string> pluginFolders;
    app.add_option("--plugins", pluginFolders,
        "a folder of clause-head plugins to load first (repeatable; before the user's and the "
        "built-in ones)");
    std::string server, serverModel, keyFile, backends;
    app.add_option("--server", server,
        "an OpenAI-compatible server for the llm heads (clausewright-server, vLLM, SGLang, "
        "llama.cpp): its base URL, e.g. http://gpu-box:8642");
    app.add_option("--server-model", serverModel, "the model id on --server (default: its first)");
    app.add_option(
        "--api-key-file", keyFile, "file holding --server's API key (or set CW_API_KEY)");
    app.add_option("--backends", backends,
        "order to try: local, remote, local,remote or remote,local (default: remote with "
        "--server, else local)");
    try {
        app.parse(int(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        return cw::cli::usageExit(app, e);
    }
    const auto reportFormat = cw::reportFormatFromName(QString::fromStdString(format));
    if (!reportFormat) {
        std::fprintf(stderr, "review: unknown format '%s'\n", format.c_str());
        return 2;
    }
    if (*reportFormat == cw::ReportFormat::Pdf && out.empty()) {
        std::fprintf(stderr, "review: --format pdf needs --out FILE\n");
        return 2;
    }
    if (!QFileInfo::exists(QString::fromStdString(file))) {
        std::fprintf(stderr, "review: %s: no such file\n", file.c_str());
        return 1;
    }
    // PDF reports need fonts, hence a QGuiApplication; offscreen so no display is needed.
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
        qputenv("QT_QPA_PLATFORM", "offscreen");
    int argc = 1;
    char* argv[] = { args[0], nullptr };
    QGuiApplication qtApp(argc, argv);
    QCoreApplication::setApplicationName("clausewright");

    // A model given means the model reviews: the fast heads alone only when asked for.
    if (heads.empty())
        heads = model.empty() && server.empty() ? "fast" : "all";
    cw::ReviewOptions options;
    options.heads = QString::fromStdString(heads);
    options.modelPath = QString::fromStdString(model);
    options.playbookPath = QString::fromStdString(playbook);
    options.textOnly = textOnly;
    for (const std::string& folder : pluginFolders)
        options.pluginFolders.append(QString::fromStdString(folder));
    options.password = password.empty() ? qEnvironmentVariable("CW_PDF_PASSWORD")
                                        : QString::fromStdString(password);
    options.modelThreads = threads;
    options.modelDevice = QString::fromStdString(device);
    options.modelPrecision = QString::fromStdString(precision);
    options.modelGpuMemoryGiB = gpuMemory;
    options.modelContext = context;
    options.remote.baseUrl = QString::fromStdString(server);
    options.remote.model = QString::fromStdString(serverModel);
    options.remote.apiKey = qEnvironmentVariable("CW_API_KEY");
    if (!keyFile.empty()) {
        auto key = cw::generation::readApiKeyFile(QString::fromStdString(keyFile));
        if (!key) {
            std::fprintf(stderr, "review: --api-key-file %s: %s\n", keyFile.c_str(),
                key.error().message.c_str());
            return 1;
        }
        options.remote.apiKey = *key;
    }
    if (backends.empty())
        backends = server.empty() ? "local" : (model.empty() ? "remote" : "remote,local");
    const auto order = cw::generation::backendOrderFromKey(QString::fromStdString(backends));
    if (!order) {
        std::fprintf(stderr,
            "review: --backends must be local, remote, local,remote or remote,local, not '%s'\n",
            backends.c_str());
        return 2;
    }
    options.backendOrder = *order;
    if (options.heads == "llm" && !cw::hasModelBackend(options)) {
        std::fprintf(stderr,
            "review: --heads llm needs --model PATH (a GGUF file or a Hugging Face folder) or "
            "--server URL\n");
        return 2;
    }
    cw::ReviewEvents events;
    events.progress = [](cw::ReviewStage stage, int done, int total) {
        if (stage == cw::ReviewStage::ModelReview && total > 0)
            std::fprintf(stderr, "review: model review %d/%d\n", done, total);
    };
    // The questions are decoded together, so their notes arrive interleaved: each is
    // gathered and printed whole when its question is answered.
    QMap<int, QString> categories, notes;
    if (showNotes) {
        events.modelQuestions = [&categories](const QList<cw::ModelQuestionInfo>& questions) {
            for (const auto& q : questions)
                categories[q.id] = q.categories.join(", ");
        };
        events.modelNote
            = [&notes](int question, const QString& piece) { notes[question] += piece; };
        events.modelFindings = [&](int question, const QList<cw::Finding>& findings) {
            std::fprintf(stderr, "review: note on %s (%lld findings): %s\n",
                qPrintable(categories.value(question)), qlonglong(findings.size()),
                qPrintable(notes.value(question)));
        };
    }
    events.modelBackend = [](const QString& backend, const QString& passedOver) {
        std::fprintf(stderr, "review: model questions go to the %s%s\n", qPrintable(backend),
            passedOver.isEmpty() ? "" : qPrintable(" (passed over: " + passedOver + ")"));
    };
    auto review
        = cw::ReviewPipeline::runBlocking(QString::fromStdString(file), options, nullptr, events);
    if (!review) {
        std::fprintf(stderr, "review: %s\n", review.error().message.c_str());
        if (options.password.isEmpty()
            && review.error().message.find("password protected") != std::string::npos)
            std::fprintf(stderr, "review: give the password with --password or CW_PDF_PASSWORD\n");
        return 1;
    }
    for (const QString& warning : review->document.warnings)
        std::fprintf(stderr, "review: warning: %s\n", qPrintable(warning));
    if (!noSave) {
        // Saved before the report is written, so a report that cannot be written (a full
        // disk, a folder that does not exist) loses no review: `history export` writes it.
        const QString path
            = dbPath.empty() ? cw::HistoryDatabase::defaultPath() : QString::fromStdString(dbPath);
        auto db = cw::HistoryDatabase::open(path);
        cw::Result<qint64> saved = db ? db.value()->save(*review) : cw::Result<qint64>(db.error());
        if (!saved) {
            std::fprintf(stderr, "review: not saved in the history: %s (--no-save skips it)\n",
                saved.error().message.c_str());
            return 1;
        }
        review->id = *saved;
        std::fprintf(stderr, "review: saved in the history as review %lld (%s)\n",
            qlonglong(*saved), qPrintable(path));
    }
    if (!redline.empty()) {
        const QString playbookPath
            = options.playbookPath.isEmpty() ? cw::defaultPlaybookPath() : options.playbookPath;
        auto book = cw::loadPlaybook(playbookPath);
        if (!book) {
            std::fprintf(stderr, "review: %s\n", book.error().message.c_str());
            return 1;
        }
        auto written = cw::exportRedline(*review, *book, QString::fromStdString(redline));
        if (!written) {
            std::fprintf(stderr, "review: --redline: %s\n", written.error().message.c_str());
            return 1;
        }
        for (const QString& note : written->notPlaced)
            std::fprintf(stderr, "review: redline: %s\n", qPrintable(note));
        std::fprintf(stderr, "review: redline with %d tracked changes and %d comments, wrote %s\n",
            written->changes, written->comments, redline.c_str());
    }
    if (!out.empty()) {
        if (auto written = cw::exportReview(*review, *reportFormat, QString::fromStdString(out));
            !written) {
            std::fprintf(stderr, "review: %s\n", written.error().message.c_str());
            return 1;
        }
        std::fprintf(stderr, "review: %lld findings, wrote %s\n",
            qlonglong(review->findings.size()), out.c_str());
        return 0;
    }
    auto bytes = cw::renderReport(*review, *reportFormat);
    if (!bytes) {
        std::fprintf(stderr, "review: %s\n", bytes.error().message.c_str());
        return 1;
    }
    std::fwrite(bytes->constData(), 1, size_t(bytes->size()), stdout);
    if (!bytes->endsWith('\n'))
        std::fputc('\n', stdout);
    return 0;
}

const cw::cli::CliCommandRegistration kRegistration { { "review",
    "review a contract: clauses, findings, risks (json, md, html, pdf)", runReview } };

} // namespace

#include "app/folder_review/folder_review.h"

#include "app/history/history_database.h"
#include "app/playbook/playbook.h"
#include "app/plugins/plugin_host.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QThread>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace cw {

QStringList contractsUnder(const QString& folder)
{
    QStringList files;
    QDirIterator it(folder, QDir::Files | QDir::Readable,
        QDirIterator::Subdirectories | QDirIterator::FollowSymlinks);
    while (it.hasNext()) {
        const QFileInfo file(it.next());
        const QString suffix = file.suffix().toLower();
        if ((suffix == "pdf" || suffix == "docx" || suffix == "txt")
            && !file.fileName().startsWith(QLatin1String("~$")))
            files.append(file.absoluteFilePath());
    }
    std::sort(files.begin(), files.end());
    return files;
}

namespace {

Result<QString> sha256Of(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return makeError(
            "'" + path.toStdString() + "': cannot open (" + file.errorString().toStdString() + ")");
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&file))
        return makeError("'" + path.toStdString() + "': cannot read");
    return QString::fromLatin1(hash.result().toHex());
}

// Reviews handed from the workers to the calling thread, which alone touches the history.
struct Finished {
    int index = 0;
    Result<Review> review = Error {};
};

class Handoff {
public:
    void push(Finished f)
    {
        {
            std::lock_guard lock(m_mutex);
            m_queue.push_back(std::move(f));
        }
        m_ready.notify_one();
    }
    Finished pop()
    {
        std::unique_lock lock(m_mutex);
        m_ready.wait(lock, [this] { return !m_queue.empty(); });
        Finished f = std::move(m_queue.front());
        m_queue.pop_front();
        return f;
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<Finished> m_queue;
};

} // namespace

Result<QList<ContractResult>> reviewFolder(const QString& folder,
    const FolderReviewOptions& options, const std::atomic_bool* cancel,
    const std::function<void(const FolderReviewProgress&)>& progress)
{
    const QFileInfo info(folder);
    if (!info.isDir())
        return makeError("'" + folder.toStdString() + "': not a folder");
    const QString playbookPath = options.review.playbookPath.isEmpty()
        ? defaultPlaybookPath()
        : options.review.playbookPath;
    auto playbook = loadPlaybook(playbookPath);
    if (!playbook)
        return playbook.error();
    auto db = HistoryDatabase::open(options.historyPath);
    if (!db)
        return db.error();

    ReviewOptions reviewOptions = options.review;
    reviewOptions.playbookPath = playbookPath;
    if (!reviewOptions.plugins) {
        reviewOptions.plugins = std::make_shared<PluginHost>(reviewOptions.pluginFolders);
        reviewOptions.plugins->heads(); // loaded here, once, before the workers share it
    }

    QElapsedTimer clock;
    clock.start();
    const QDir root(info.absoluteFilePath());
    QList<ContractResult> results;
    for (const QString& path : contractsUnder(folder)) {
        ContractResult r;
        r.path = path;
        r.relativePath = root.relativeFilePath(path);
        results.append(r);
    }
    FolderReviewProgress state;
    state.total = int(results.size());
    auto report = [&](const QString& last, qint64 reviewingSinceMs, int reviewed, int pending) {
        state.elapsedMs = clock.elapsed();
        state.last = last;
        if (reviewed > 0) {
            const double each = double(clock.elapsed() - reviewingSinceMs) / reviewed;
            state.remainingMs = qint64(each * pending);
        }
        if (progress)
            progress(state);
    };

    // Resume: the contracts the history has already reviewed against this playbook.
    std::vector<int> pending;
    for (int i = 0; i < results.size(); ++i) {
        if (cancel && cancel->load())
            return makeError("cancelled");
        ContractResult& r = results[i];
        auto sha = sha256Of(r.path);
        if (!sha) {
            r.error = QString::fromStdString(sha.error().message);
            ++state.failed;
            ++state.done;
            report(r.relativePath, 0, 0, 0);
            continue;
        }
        auto id = (*db)->latestReviewOf(*sha, playbook->name);
        if (!id)
            return id.error();
        if (!*id) {
            pending.push_back(i);
            continue;
        }
        auto saved = (*db)->load(**id);
        if (!saved) {
            pending.push_back(i); // unreadable in the history: review it again
            continue;
        }
        r.review = std::move(*saved);
        r.resumed = true;
        ++state.resumed;
        ++state.done;
        report(r.relativePath, 0, 0, 0);
    }

    const qint64 reviewingSince = clock.elapsed();
    const int jobs = std::clamp(options.jobs > 0 ? options.jobs : QThread::idealThreadCount(), 1,
        std::max(1, int(pending.size())));
    std::atomic<size_t> next { 0 };
    Handoff handoff;
    std::vector<std::thread> workers;
    for (int j = 0; j < jobs && !pending.empty(); ++j) {
        workers.emplace_back([&] {
            for (size_t k = next++; k < pending.size(); k = next++) {
                const int index = pending[k];
                if (cancel && cancel->load()) {
                    handoff.push({ index, makeError("cancelled") });
                    continue;
                }
                handoff.push({ index,
                    ReviewPipeline::runBlocking(results[index].path, reviewOptions, cancel) });
            }
        });
    }
    int reviewed = 0;
    for (size_t k = 0; k < pending.size(); ++k) {
        Finished f = handoff.pop();
        ContractResult& r = results[f.index];
        if (f.review) {
            if (auto id = (*db)->save(*f.review); id) {
                f.review->id = *id;
            } else {
                r.error = QStringLiteral("reviewed, but not saved to the history: %1")
                              .arg(QString::fromStdString(id.error().message));
            }
            r.review = std::move(*f.review);
            ++reviewed;
        } else if (cancel && cancel->load()) {
            continue; // cancelled, not failed: the next run reviews it
        } else {
            r.error = QString::fromStdString(f.review.error().message);
            ++state.failed;
        }
        ++state.done;
        report(r.relativePath, reviewingSince, reviewed, int(pending.size() - k - 1));
    }
    for (std::thread& t : workers)
        t.join();
    if (cancel && cancel->load())
        return makeError("cancelled");
    return results;
}

} // namespace cw

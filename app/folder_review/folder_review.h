#pragma once

#include "app/review/review_pipeline.h"
#include "app/review/review_types.h"
#include "engine/common/result.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <atomic>
#include <functional>
#include <optional>

namespace cw {

struct FolderReviewOptions {
    ReviewOptions review; // the heads, playbook and plugins each contract is reviewed with
    QString historyPath; // the history database every review is saved to
    int jobs = 0; // contracts reviewed at once; 0: one per core
};

// One contract of the folder: its review (new or from the history) or why it has none.
struct ContractResult {
    QString path; // absolute
    QString relativePath; // to the folder, for the table
    std::optional<Review> review;
    bool resumed = false; // the history already had it (same SHA-256 and playbook)
    QString error; // when there is no review
};

struct FolderReviewProgress {
    int done = 0; // contracts finished (reviewed, resumed or failed)
    int total = 0;
    int resumed = 0;
    int failed = 0;
    qint64 elapsedMs = 0;
    // Time left, from the pace of the reviews made so far (resumed ones cost nothing);
    // nullopt until one has been made.
    std::optional<qint64> remainingMs;
    QString last; // relative path of the contract just finished
};

// The contracts under a folder, its subfolders included: *.pdf, *.docx and *.txt (any case),
// without Word's "~$" lock files, sorted by relative path.
QStringList contractsUnder(const QString& folder);

// Reviews every contract under `folder` (contractsUnder), `jobs` at a time, and saves each new
// review to the history as soon as it is made; a contract the history already has (same
// content hash, same playbook) is read from there instead of being reviewed again, so a second
// run resumes where the first stopped. A contract that cannot be read gets an error and the
// rest go on. `progress` is called on the calling thread after each contract. When `cancel`
// turns true, the reviews in flight stop and the result is the error "cancelled"; what was
// saved stays saved. Errors: the folder, the history or the playbook cannot be used.
Result<QList<ContractResult>> reviewFolder(const QString& folder,
    const FolderReviewOptions& options, const std::atomic_bool* cancel = nullptr,
    const std::function<void(const FolderReviewProgress&)>& progress = {});

} // namespace cw

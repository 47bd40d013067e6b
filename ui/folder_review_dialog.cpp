#include "ui/folder_review_dialog.h"

#include "app/folder_review/review_table.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <qcoro/qcorofuture.h>

namespace {

QString minutes(qint64 ms)
{
    const qint64 s = (ms + 500) / 1000;
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

QWidget* withBrowse(QLineEdit* edit, QPushButton* browse)
{
    auto* row = new QWidget;
    auto* layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    layout->addWidget(browse);
    return row;
}

} // namespace

FolderReviewDialog::FolderReviewDialog(
    cw::ReviewOptions options, QString historyPath, QWidget* parent)
    : QDialog(parent)
    , m_options(std::move(options))
    , m_historyPath(std::move(historyPath))
{
    setWindowTitle(tr("Review a Folder"));
    m_options.heads = QStringLiteral("fast");
    m_folder = new QLineEdit(this);
    m_table = new QLineEdit(this);
    auto* browseFolder = new QPushButton(tr("Browse…"), this);
    auto* browseTable = new QPushButton(tr("Browse…"), this);
    connect(browseFolder, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Folder of contracts"));
        if (dir.isEmpty())
            return;
        m_folder->setText(dir);
        if (m_table->text().isEmpty())
            m_table->setText(dir + QStringLiteral("/contracts-review.xlsx"));
    });
    connect(browseTable, &QPushButton::clicked, this, [this] {
        const QString path = QFileDialog::getSaveFileName(this, tr("Table of the contracts"),
            m_table->text(), tr("Excel workbook (*.xlsx);;CSV (*.csv)"));
        if (!path.isEmpty())
            m_table->setText(path);
    });
    auto* form = new QFormLayout;
    form->addRow(tr("Contracts (PDF, DOCX, text):"), withBrowse(m_folder, browseFolder));
    form->addRow(tr("Table (.xlsx or .csv):"), withBrowse(m_table, browseTable));
    m_bar = new QProgressBar(this);
    m_bar->setRange(0, 1);
    m_bar->setValue(0);
    m_status = new QLabel(tr("Each contract is reviewed with the fast heads and saved to the "
                             "history; contracts already there are not reviewed again."),
        this);
    m_status->setWordWrap(true);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    m_start = buttons->addButton(tr("Review"), QDialogButtonBox::AcceptRole);
    connect(m_start, &QPushButton::clicked, this, &FolderReviewDialog::start);
    connect(buttons, &QDialogButtonBox::rejected, this, &FolderReviewDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_bar);
    layout->addWidget(m_status);
    layout->addWidget(buttons);
    resize(640, sizeHint().height());
}

FolderReviewDialog::~FolderReviewDialog()
{
    if (m_cancel)
        m_cancel->store(true);
}

void FolderReviewDialog::reject()
{
    if (m_running) {
        m_cancel->store(true);
        m_status->setText(tr("Cancelling…"));
        return;
    }
    QDialog::reject();
}

void FolderReviewDialog::showProgress(const cw::FolderReviewProgress& p)
{
    m_bar->setRange(0, std::max(1, p.total));
    m_bar->setValue(p.done);
    QString text = tr("%1 of %2 contracts (%3 from the history, %4 failed), %5 elapsed")
                       .arg(p.done)
                       .arg(p.total)
                       .arg(p.resumed)
                       .arg(p.failed)
                       .arg(minutes(p.elapsedMs));
    if (p.remainingMs)
        text += tr(", about %1 left").arg(minutes(*p.remainingMs));
    m_status->setText(text);
}

void FolderReviewDialog::start()
{
    const QString folder = m_folder->text().trimmed();
    const QString table = m_table->text().trimmed();
    if (folder.isEmpty() || table.isEmpty()) {
        m_status->setText(tr("Choose the folder of contracts and the table to write."));
        return;
    }
    m_running = true;
    m_start->setEnabled(false);
    m_cancel = std::make_shared<std::atomic_bool>(false);
    cw::FolderReviewOptions options;
    options.review = m_options;
    options.historyPath = m_historyPath;
    QPointer<FolderReviewDialog> self(this);
    auto toUi = [self](const cw::FolderReviewProgress& p) {
        QMetaObject::invokeMethod(
            self.data(),
            [self, p] {
                if (self)
                    self->showProgress(p);
            },
            Qt::QueuedConnection);
    };
    std::shared_ptr<std::atomic_bool> cancel = m_cancel;
    auto work = [folder, table, options, cancel, toUi]() -> cw::Result<QString> {
        auto results = cw::reviewFolder(folder, options, cancel.get(), toUi);
        if (!results)
            return results.error();
        if (results->isEmpty())
            return cw::makeError("no PDF, DOCX or text files in '" + folder.toStdString() + "'");
        const cw::ReviewTable rows = cw::buildReviewTable(*results);
        if (auto written = cw::writeReviewTable(rows, table); !written)
            return written.error();
        return QStringLiteral("%1 contracts (%2 reviewed, %3 from the history, %4 failed) in %5")
            .arg(rows.rows.size())
            .arg(rows.reviewed)
            .arg(rows.resumed)
            .arg(rows.failed)
            .arg(table);
    };
    [](QPointer<FolderReviewDialog> self, QFuture<cw::Result<QString>> future) -> QCoro::Task<> {
        const cw::Result<QString> done = co_await future;
        if (!self)
            co_return;
        self->m_running = false;
        self->m_start->setEnabled(true);
        if (done)
            self->m_status->setText(tr("Done: %1.").arg(*done));
        else if (self->m_cancel->load())
            self->m_status->setText(tr("Cancelled. The contracts reviewed so far are in the "
                                       "history; review the folder again to go on from them."));
        else
            self->m_status->setText(
                tr("Stopped: %1").arg(QString::fromStdString(done.error().message)));
    }(self, QtConcurrent::run(work));
}

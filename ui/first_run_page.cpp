#include "ui/first_run_page.h"

#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>

namespace cw::ui {

namespace {

// Weights alone, from the parameter count and the format's bits per weight (Q4_K_M about 4.9,
// Q8_0 8.5, BF16 16); the KV cache and the context come on top (Model Settings' memory plan).
QString modelSizesTable()
{
    struct Row {
        const char* model;
        double billions;
    };
    const Row rows[] = { { "Qwen3-30B-A3B", 30.5 }, { "Qwen3.6-35B-A3B", 35.0 } };
    QString html = QStringLiteral("<table cellspacing='0' cellpadding='4' border='1'>"
                                  "<tr><th></th><th>Q4_K_M</th><th>Q8_0</th><th>BF16</th></tr>");
    for (const Row& row : rows) {
        html += QStringLiteral("<tr><td>%1</td>").arg(QString::fromLatin1(row.model));
        for (const double bits : { 4.9, 8.5, 16.0 })
            html += QStringLiteral("<td align='right'>%1</td>")
                        .arg(FirstRunPage::tr("%1 GB").arg(row.billions * bits / 8.0, 0, 'f', 0));
        html += QStringLiteral("</tr>");
    }
    return html + QStringLiteral("</table>");
}

QLabel* paragraph(const QString& html, QWidget* parent)
{
    auto* label = new QLabel(html, parent);
    label->setWordWrap(true);
    label->setTextFormat(Qt::RichText);
    label->setTextInteractionFlags(Qt::TextBrowserInteraction);
    return label;
}

} // namespace

FirstRunPage::FirstRunPage(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("firstRunPage"));
    auto* outer = new QVBoxLayout(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    outer->addWidget(scroll);
    auto* content = new QWidget(scroll);
    content->setMaximumWidth(760);
    auto* layout = new QVBoxLayout(content);
    layout->setSpacing(14);
    scroll->setWidget(content);

    auto* title = new QLabel(tr("Welcome to Clausewright"), content);
    title->setStyleSheet(QStringLiteral("font-size: 22px; font-weight: bold;"));
    layout->addWidget(title);

    layout->addWidget(paragraph(tr("<b>The built-in clause heads work now, without a model.</b> "
                                   "Drop a contract (PDF, DOCX or TXT) on the window or choose "
                                   "File ▸ Open: every clause is classified into the CUAD "
                                   "categories, its key terms are extracted and it is rated "
                                   "against the playbook."),
        content));

    layout->addWidget(paragraph(
        tr("<b>A language model can check their work.</b> Choose one in Model ▸ Model Settings: "
           "a GGUF file as published for llama.cpp, or a Hugging Face model folder, of "
           "Qwen3-30B-A3B or Qwen3.6-35B-A3B. It runs on this computer, on an NVIDIA GPU "
           "where there is one, else on the CPU (slower). The weights need about:"),
        content));
    layout->addWidget(paragraph(modelSizesTable(), content));
    layout->addWidget(paragraph(
        tr("plus the KV cache for the context length. A 24 GB GPU takes the Q4_K_M files (the "
           "35B with a short context), 48 GB the Q8_0 files, 80 GB and more BF16. Model Settings "
           "reads the file you "
           "choose and shows its memory plan (<tt>clausewright-cli inspect</tt>) before "
           "anything is loaded."),
        content));

    m_dataFolder = paragraph(QString(), content);
    m_dataFolder->setObjectName(QStringLiteral("firstRunDataFolder"));
    layout->addWidget(m_dataFolder);

    auto* buttons = new QHBoxLayout;
    auto* fast = new QPushButton(tr("Start with the &Fast Heads"), content);
    fast->setObjectName(QStringLiteral("firstRunFastHeads"));
    fast->setDefault(true);
    auto* sample = new QPushButton(tr("Open the &Sample Contract"), content);
    sample->setObjectName(QStringLiteral("firstRunSample"));
    auto* model = new QPushButton(tr("Choose a &Model…"), content);
    model->setObjectName(QStringLiteral("firstRunChooseModel"));
    buttons->addWidget(fast);
    buttons->addWidget(sample);
    buttons->addWidget(model);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    layout->addStretch(1);

    connect(fast, &QPushButton::clicked, this, &FirstRunPage::startWithFastHeads);
    connect(sample, &QPushButton::clicked, this, &FirstRunPage::openSampleContract);
    connect(model, &QPushButton::clicked, this, &FirstRunPage::chooseModel);
}

void FirstRunPage::setDataFolder(const QString& path)
{
    m_dataFolder->setText(tr("Your review history and the plugins you add are kept in "
                             "<tt>%1</tt>. Removing the program leaves them there.")
                              .arg(QDir::toNativeSeparators(path).toHtmlEscaped()));
}

} // namespace cw::ui

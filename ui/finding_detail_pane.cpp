#include "ui/finding_detail_pane.h"

#include "ui/findings_table_model.h"

#include <QComboBox>
#include <QFormLayout>
#include <QJsonArray>
#include <QJsonValue>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextBrowser>
#include <QTextCursor>
#include <QVBoxLayout>

namespace cw::ui {

namespace {

QString fieldValueText(const QJsonValue& value)
{
    if (value.isArray()) {
        QStringList items;
        for (const QJsonValue& item : value.toArray())
            items.append(fieldValueText(item));
        return items.join(QStringLiteral(", "));
    }
    if (value.isObject()) {
        QStringList items;
        const QJsonObject object = value.toObject();
        for (auto it = object.begin(); it != object.end(); ++it)
            items.append(it.key() + QStringLiteral(": ") + fieldValueText(it.value()));
        return items.join(QStringLiteral("; "));
    }
    if (value.isBool())
        return value.toBool() ? QStringLiteral("yes") : QStringLiteral("no");
    return value.toVariant().toString();
}

} // namespace

FindingDetailPane::FindingDetailPane(QWidget* parent)
    : QWidget(parent)
{
    setObjectName(QStringLiteral("findingDetail"));
    auto* layout = new QVBoxLayout(this);
    m_title = new QLabel(this);
    m_title->setObjectName(QStringLiteral("findingTitle"));
    m_title->setWordWrap(true);
    QFont titleFont = m_title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.2);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    layout->addWidget(m_title);

    m_body = new QTextBrowser(this);
    m_body->setAccessibleName(tr("Finding details"));
    m_body->setOpenLinks(false);
    layout->addWidget(m_body, 1);

    m_noteTitle = new QLabel(this);
    m_noteTitle->setObjectName(QStringLiteral("modelNoteTitle"));
    m_note = new QPlainTextEdit(this);
    m_note->setObjectName(QStringLiteral("modelNote"));
    m_note->setAccessibleName(tr("Language model's note"));
    m_note->setReadOnly(true);
    m_note->setMaximumHeight(110);
    m_noteTitle->hide();
    m_note->hide();
    layout->addWidget(m_noteTitle);
    layout->addWidget(m_note);

    auto* form = new QFormLayout;
    m_category = new QComboBox(this);
    m_category->setEditable(false);
    m_category->setAccessibleName(tr("Category"));
    m_risk = new QComboBox(this);
    m_risk->setAccessibleName(tr("Risk"));
    for (cw::Risk risk : { cw::Risk::None, cw::Risk::Low, cw::Risk::Medium, cw::Risk::High })
        m_risk->addItem(FindingsTableModel::riskLabel(risk), int(risk));
    m_comment = new QPlainTextEdit(this);
    m_comment->setAccessibleName(tr("Comment"));
    m_comment->setPlaceholderText(tr("Your comment on this clause"));
    m_comment->setMaximumHeight(70);
    form->addRow(tr("&Category:"), m_category);
    form->addRow(tr("&Risk:"), m_risk);
    form->addRow(tr("C&omment:"), m_comment);
    layout->addLayout(form);
    m_save = new QPushButton(tr("&Save correction"), this);
    m_save->setAccessibleName(tr("Save correction"));
    connect(m_save, &QPushButton::clicked, this, &FindingDetailPane::applyEdit);
    layout->addWidget(m_save, 0, Qt::AlignRight);
    showFinding(nullptr, -1);
}

void FindingDetailPane::setCategories(const QStringList& categories)
{
    m_categories = categories;
    m_category->clear();
    m_category->addItems(categories);
    m_category->setCurrentIndex(-1);
}

void FindingDetailPane::showFinding(const cw::Review* review, int findingIndex)
{
    const bool valid = review && findingIndex >= 0 && findingIndex < review->findings.size();
    m_findingIndex = valid ? findingIndex : -1;
    setModelNote(QString(), false); // the view sets the live note of the finding, if any
    for (QWidget* w : { static_cast<QWidget*>(m_category), static_cast<QWidget*>(m_risk),
             static_cast<QWidget*>(m_comment), static_cast<QWidget*>(m_save) })
        w->setEnabled(valid);
    if (!valid) {
        // Nothing of the last finding stays: not its category or risk in the disabled
        // pickers, nor the categories only another contract's findings had.
        m_title->setText(tr("Select a clause in the table to see its details."));
        m_body->clear();
        m_comment->clear();
        if (m_category->count() != m_categories.size())
            setCategories(m_categories);
        m_category->setCurrentIndex(-1);
        m_risk->setCurrentIndex(-1);
        return;
    }
    const cw::Finding& finding = review->findings[findingIndex];
    m_title->setText(finding.category);

    QString html;
    const QString color = FindingsTableModel::riskColor(finding.risk).name();
    html += QStringLiteral(
        "<p><span style='background:%1;color:white;padding:2px 6px;'>&nbsp;%2&nbsp;</span>")
                .arg(color, FindingsTableModel::riskLabel(finding.risk).toHtmlEscaped());
    if (finding.page > 0)
        html += tr(" &nbsp;page %1").arg(finding.page);
    if (finding.confidence)
        html += tr(" · confidence %1 %").arg(qRound(*finding.confidence * 100));
    html += QStringLiteral(" · %1").arg(
        finding.source == QLatin1String("llm") ? tr("language model") : tr("fast head"));
    if (finding.needsHumanReview)
        html += tr("<br/><b>The fast head and the language model disagree: please check.</b>");
    html += QStringLiteral("</p>");
    if (finding.clauseIndex >= 0 && finding.clauseIndex < review->clauses.size()) {
        const cw::Clause& clause = review->clauses[finding.clauseIndex];
        html += QStringLiteral("<p><b>%1</b></p>")
                    .arg((clause.number + QLatin1Char(' ') + clause.heading)
                             .trimmed()
                             .toHtmlEscaped());
    }
    if (!finding.fields.isEmpty()) {
        html += QStringLiteral("<table cellspacing='4'>");
        for (auto it = finding.fields.begin(); it != finding.fields.end(); ++it)
            html += QStringLiteral("<tr><td><i>%1</i></td><td>%2</td></tr>")
                        .arg(it.key().toHtmlEscaped(), fieldValueText(it.value()).toHtmlEscaped());
        html += QStringLiteral("</table>");
    }
    if (!finding.rationale.isEmpty()) {
        html += QStringLiteral("<h4>%1</h4><p>%2</p>")
                    .arg(finding.ruleId.isEmpty()
                            ? tr("Note")
                            : tr("Playbook: %1").arg(finding.ruleId.toHtmlEscaped()),
                        finding.rationale.toHtmlEscaped());
    }
    html += QStringLiteral("<h4>%1</h4><p style='white-space:pre-wrap'>%2</p>")
                .arg(tr("Clause text"), finding.text.toHtmlEscaped());
    if (!finding.suggestedText.isEmpty())
        html += QStringLiteral("<h4>%1</h4><p style='white-space:pre-wrap'>%2</p>")
                    .arg(tr("Wording the language model proposes (Export redline… makes it "
                            "a tracked change)"),
                        finding.suggestedText.toHtmlEscaped());
    m_body->setHtml(html);

    if (m_category->findText(finding.category) < 0)
        m_category->addItem(finding.category);
    m_category->setCurrentText(finding.category);
    m_risk->setCurrentIndex(m_risk->findData(int(finding.risk)));
    m_comment->setPlainText(finding.userComment);
}

void FindingDetailPane::setModelNote(const QString& note, bool writing)
{
    const bool show = writing || !note.isEmpty();
    m_noteTitle->setVisible(show);
    m_note->setVisible(show);
    m_noteTitle->setText(writing ? tr("<b>Language model's note</b> (writing…)")
                                 : tr("<b>Language model's note</b>"));
    m_note->setPlainText(note);
}

void FindingDetailPane::appendModelNote(const QString& piece)
{
    if (m_note->isHidden())
        setModelNote(QString(), true);
    // Insert at the end without a paragraph break: pieces are parts of one text.
    QTextCursor cursor(m_note->document());
    cursor.movePosition(QTextCursor::End);
    cursor.insertText(piece);
    m_note->ensureCursorVisible();
}

void FindingDetailPane::setModelNoteFinished()
{
    if (m_note->isVisible())
        m_noteTitle->setText(tr("<b>Language model's note</b>"));
}

QString FindingDetailPane::modelNote() const
{
    return m_note->toPlainText();
}

void FindingDetailPane::applyEdit()
{
    if (m_findingIndex < 0)
        return;
    emit findingEdited(m_findingIndex, m_category->currentText(),
        cw::Risk(m_risk->currentData().toInt()), m_comment->toPlainText().trimmed());
}

} // namespace cw::ui

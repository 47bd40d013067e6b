#pragma once

// A small review with the awkward cases the exporters and the history store must survive:
// CJK text, a character outside the BMP (two UTF-16 units, one code point), HTML and CSV
// metacharacters, a user edit and a finding outside any clause. Shared by tests/app/report
// and tests/app/history.
#include "app/review/review_types.h"

#include <QJsonArray>

namespace cw::testing {

inline Review sampleReview()
{
    Review review;
    Document& d = review.document;
    d.path = QStringLiteral("/contracts/supply-agreement.pdf");
    d.format = DocumentFormat::Pdf;
    d.title = QStringLiteral("Supply Agreement <Acme & Co>");
    d.sha256 = QStringLiteral("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
    // 😀 (U+1F600) is two UTF-16 units: every offset after it differs by one in code points.
    const QString preamble = QStringLiteral("SUPPLY AGREEMENT \U0001F600 between Acme and Beta.\n");
    const QString law = QStringLiteral(
        "1. Governing Law. This Agreement is governed by the laws of Delaware, \"USA\", "
        "excluding <conflict> rules.\n");
    const QString term = QStringLiteral("2. Term. The term is 5 years, renewing automatically "
                                        "unless either party gives 60 days' notice.\n");
    const QString cjk = QStringLiteral("第三条 适用法律：本合同受中华人民共和国法律管辖。\n");
    d.text = preamble + law + term + cjk;
    d.pages = { PageInfo { 1, QSizeF(612, 792), true }, PageInfo { 2, QSizeF(612, 792), true } };
    const qsizetype lawStart = preamble.size();
    const qsizetype termStart = lawStart + law.size();
    const qsizetype cjkStart = termStart + term.size();
    d.lines = { TextLine { 1, QRectF(72, 72, 400, 12), 0, lawStart - 1, true, 14 },
        TextLine { 1, QRectF(72, 90, 460, 12), lawStart, termStart - 1, false, 11 },
        TextLine { 2, QRectF(72, 72, 460, 12), termStart, cjkStart - 1, false, 11 },
        TextLine { 2, QRectF(72, 90, 300, 12), cjkStart, d.text.size() - 1, false, 11 } };
    d.warnings = { QStringLiteral("page 2: header removed") };

    Clause c0;
    c0.index = 0;
    c0.kind = ClauseKind::Preamble;
    c0.start = 0;
    c0.end = c0.ownEnd = lawStart;
    c0.page = 1;
    Clause c1;
    c1.index = 1;
    c1.number = QStringLiteral("1.");
    c1.heading = QStringLiteral("Governing Law");
    c1.start = lawStart;
    c1.end = c1.ownEnd = termStart;
    c1.page = 1;
    Clause c2 = c1;
    c2.index = 2;
    c2.number = QStringLiteral("2.");
    c2.heading = QStringLiteral("Term");
    c2.start = termStart;
    c2.end = c2.ownEnd = cjkStart;
    c2.page = 2;
    Clause c3 = c1;
    c3.index = 3;
    c3.number = QStringLiteral("第三条");
    c3.heading = QStringLiteral("适用法律");
    c3.start = cjkStart;
    c3.end = c3.ownEnd = d.text.size();
    c3.page = 2;
    review.clauses = { c0, c1, c2, c3 };

    Finding law1;
    law1.category = QStringLiteral("Governing Law");
    law1.start = d.text.indexOf(QStringLiteral("governed by"));
    law1.end = law1.start + QStringLiteral("governed by the laws of Delaware").size();
    law1.text = d.text.mid(law1.start, law1.end - law1.start);
    law1.page = 1;
    law1.clauseIndex = 1;
    law1.fields = QJsonObject { { "law", "Delaware" } };
    law1.confidence = 0.97;
    law1.risk = Risk::Low;
    law1.ruleId = QStringLiteral("governing-law.us");
    law1.rationale = QStringLiteral("US law, acceptable; watch for <conflict> rules, \"quoted\"");
    law1.source = QStringLiteral("fast");

    Finding renewal;
    renewal.category = QStringLiteral("Renewal Term");
    renewal.start = d.text.indexOf(QStringLiteral("renewing automatically"));
    renewal.end = renewal.start + QStringLiteral("renewing automatically").size();
    renewal.text = QStringLiteral("renewing automatically, unless notice,\n\"60 days\"");
    renewal.page = 2;
    renewal.clauseIndex = 2;
    renewal.fields = QJsonObject { { "notice_days", 60 }, { "auto", true } };
    renewal.confidence = 0.81;
    renewal.risk = Risk::High;
    renewal.ruleId = QStringLiteral("renewal.auto");
    renewal.rationale = QStringLiteral("Automatic renewal with a short notice window.");
    renewal.source = QStringLiteral("llm");
    renewal.suggestedText = QStringLiteral("This Agreement renews only by written agreement.");
    renewal.needsHumanReview = true;
    renewal.userEdited = true;
    renewal.originalCategory = QStringLiteral("Expiration Date");
    renewal.originalRisk = Risk::Medium;
    renewal.userComment = QStringLiteral("Escalate to legal, <b>not</b> a template clause");

    Finding cjkLaw;
    cjkLaw.category = QStringLiteral("Governing Law");
    cjkLaw.start = d.text.indexOf(QStringLiteral("本合同受"));
    cjkLaw.end = d.text.size() - 1;
    cjkLaw.text = d.text.mid(cjkLaw.start, cjkLaw.end - cjkLaw.start);
    cjkLaw.page = 2;
    cjkLaw.clauseIndex = 3;
    cjkLaw.fields = QJsonObject { { "law", QStringLiteral("中华人民共和国") } };
    cjkLaw.confidence = 0.9;
    cjkLaw.risk = Risk::Medium;
    cjkLaw.ruleId = QStringLiteral("governing-law.foreign");
    cjkLaw.rationale = QStringLiteral("适用外国法律：需要审查");
    cjkLaw.source = QStringLiteral("fast");

    Finding parties;
    parties.category = QStringLiteral("Parties");
    parties.start = d.text.indexOf(QStringLiteral("Acme"));
    parties.end = parties.start + 4;
    parties.text = QStringLiteral("Acme");
    parties.page = 1;
    parties.clauseIndex = -1;
    // No confidence: a rule found it, and rules have no calibration.
    parties.source = QStringLiteral("fast");

    review.findings = { law1, renewal, cjkLaw, parties };
    review.summary.high = 1;
    review.summary.medium = 1;
    review.summary.low = 1;
    review.summary.missingCategories
        = { QStringLiteral("Limitation of Liability"), QStringLiteral("Cap on Liability") };
    review.summary.text = QStringLiteral("One high-risk clause: automatic renewal.");
    review.playbookName = QStringLiteral("Default buyer playbook");
    review.modelName = QStringLiteral("Qwen3.6-35B-A3B Q4_K_M");
    review.settings = QJsonObject { { "device", "cuda:0" }, { "context", 32768 },
        { "heads", QJsonArray { "fast", "llm" } } };
    review.timingsMs = { { "ingest", 120 }, { "segment", 4 }, { "heads", 35 }, { "llm", 8200 } };
    review.createdAt = QDateTime(QDate(2026, 11, 30), QTime(9, 15, 0), Qt::UTC);
    return review;
}

} // namespace cw::testing

#include "app/test_runner/junit_report.h"

#include <QXmlStreamReader>

namespace cw {

QList<TestCaseResult> readJUnitReport(const QByteArray& xml, bool qualify)
{
    QList<TestCaseResult> out;
    QXmlStreamReader reader(xml);
    TestCaseResult* current = nullptr;
    while (!reader.atEnd()) {
        reader.readNext();
        if (reader.isStartElement()) {
            const auto name = reader.name();
            if (name == QLatin1String("testcase")) {
                const auto attributes = reader.attributes();
                TestCaseResult c;
                const QString caseName = attributes.value("name").toString();
                const QString className = attributes.value("classname").toString();
                c.name = qualify && !className.isEmpty() ? className + '.' + caseName : caseName;
                c.seconds = attributes.value("time").toDouble();
                c.outcome = TestOutcome::Passed;
                // GoogleTest lists filtered-out and disabled tests as not run.
                if (attributes.value("status") == QLatin1String("notrun")) {
                    current = nullptr;
                    continue;
                }
                out.append(c);
                current = &out.last();
            } else if (current
                && (name == QLatin1String("failure") || name == QLatin1String("error"))) {
                current->outcome = TestOutcome::Failed;
                const QString message = reader.attributes().value("message").toString();
                const QString text = reader.readElementText(QXmlStreamReader::IncludeChildElements);
                current->output
                    += (message.isEmpty() || text.contains(message) ? text : message + '\n' + text)
                    + '\n';
            } else if (current && name == QLatin1String("skipped")) {
                current->outcome = TestOutcome::Skipped;
                current->output += reader.attributes().value("message").toString() + '\n';
            } else if (current
                && (name == QLatin1String("system-out") || name == QLatin1String("system-err"))) {
                current->output += reader.readElementText() + '\n';
            }
        } else if (reader.isEndElement() && reader.name() == QLatin1String("testcase")) {
            current = nullptr;
        }
    }
    for (TestCaseResult& c : out)
        c.output = c.output.trimmed();
    return out;
}

} // namespace cw

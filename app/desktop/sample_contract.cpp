#include "app/desktop/sample_contract.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QStringList>

namespace cw {

QString sampleContractPath()
{
    QStringList candidates;
    if (QCoreApplication::instance())
        candidates.append(QDir(QCoreApplication::applicationDirPath())
                              .filePath("../share/clausewright/samples/sample-contract.pdf"));
#ifdef CW_RESOURCE_DIR
    candidates.append(QStringLiteral(CW_RESOURCE_DIR "/samples/sample-contract.pdf"));
#endif
    for (const QString& c : candidates) {
        if (QFile::exists(c))
            return QDir::cleanPath(c);
    }
    return {};
}

} // namespace cw

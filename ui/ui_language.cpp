#include "ui/ui_language.h"

#include <QApplication>
#include <QLocale>
#include <QTranslator>

namespace cw::ui {

bool installUiLanguage(const QString& language)
{
    static QTranslator* translator = nullptr;
    if (translator) {
        QApplication::removeTranslator(translator);
        delete translator;
        translator = nullptr;
    }
    const QLocale locale = language.isEmpty() ? QLocale::system() : QLocale(language);
    if (locale.language() == QLocale::English || locale.language() == QLocale::C)
        return true;
    auto* candidate = new QTranslator;
    // Translations are compiled into the binary as resources (:/i18n/clausewright_zh_CN.qm).
    if (!candidate->load(locale, QStringLiteral("clausewright"), QStringLiteral("_"),
            QStringLiteral(":/i18n"))) {
        delete candidate;
        return false;
    }
    QApplication::installTranslator(candidate);
    translator = candidate;
    return true;
}

} // namespace cw::ui

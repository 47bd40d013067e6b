#pragma once

#include <QWidget>

class QLabel;

namespace cw::ui {

// The page a first start shows instead of the drop zone: the built-in clause heads work now,
// and how to add a language model (a GGUF file or a Hugging Face folder, what fits which GPU
// memory, the memory plan Model Settings shows). Its buttons only say what the user chose;
// MainWindow acts on them and remembers the choice.
class FirstRunPage : public QWidget {
    Q_OBJECT
public:
    explicit FirstRunPage(QWidget* parent = nullptr);

    // Where the history and the user's plugins are kept, shown on the page.
    void setDataFolder(const QString& path);

signals:
    void startWithFastHeads();
    void openSampleContract();
    void chooseModel();

private:
    QLabel* m_dataFolder = nullptr;
};

} // namespace cw::ui

<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>cw::ui::FindingDetailPane</name>
    <message>
        <source>Finding details</source>
        <translation>条款详情</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Risk</source>
        <translation>风险</translation>
    </message>
    <message>
        <source>Comment</source>
        <translation>备注</translation>
    </message>
    <message>
        <source>Your comment on this clause</source>
        <translation>您对该条款的备注</translation>
    </message>
    <message>
        <source>&amp;Category:</source>
        <translation>类别(&amp;C)：</translation>
    </message>
    <message>
        <source>&amp;Risk:</source>
        <translation>风险(&amp;R)：</translation>
    </message>
    <message>
        <source>C&amp;omment:</source>
        <translation>备注(&amp;O)：</translation>
    </message>
    <message>
        <source>&amp;Save correction</source>
        <translation>保存更正(&amp;S)</translation>
    </message>
    <message>
        <source>Save correction</source>
        <translation>保存更正</translation>
    </message>
    <message>
        <source>Select a clause in the table to see its details.</source>
        <translation>在表格中选择一个条款以查看详情。</translation>
    </message>
    <message>
        <source> &amp;nbsp;page %1 · confidence %2 % · %3</source>
        <translation> &amp;nbsp;第 %1 页 · 置信度 %2 % · %3</translation>
    </message>
    <message>
        <source>language model</source>
        <translation>语言模型</translation>
    </message>
    <message>
        <source>fast head</source>
        <translation>快速模型</translation>
    </message>
    <message>
        <source>&lt;br/&gt;&lt;b&gt;The fast head and the language model disagree: please check.&lt;/b&gt;</source>
        <translation>&lt;br/&gt;&lt;b&gt;快速模型与语言模型的判断不一致：请复核。&lt;/b&gt;</translation>
    </message>
    <message>
        <source>Note</source>
        <translation>说明</translation>
    </message>
    <message>
        <source>Playbook: %1</source>
        <translation>审查手册：%1</translation>
    </message>
    <message>
        <source>Clause text</source>
        <translation>条款原文</translation>
    </message>
    <message>
        <source>Language model&apos;s note</source>
        <translation>语言模型的意见</translation>
    </message>
    <message>
        <source>&lt;b&gt;Language model&apos;s note&lt;/b&gt; (writing…)</source>
        <translation>&lt;b&gt;语言模型的意见&lt;/b&gt;（撰写中…）</translation>
    </message>
    <message>
        <source>&lt;b&gt;Language model&apos;s note&lt;/b&gt;</source>
        <translation>&lt;b&gt;语言模型的意见&lt;/b&gt;</translation>
    </message>
</context>
<context>
    <name>cw::ui::FindingsTableModel</name>
    <message>
        <source>High</source>
        <translation>高</translation>
    </message>
    <message>
        <source>Medium</source>
        <translation>中</translation>
    </message>
    <message>
        <source>Low</source>
        <translation>低</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>%1 risk</source>
        <translation>%1风险</translation>
    </message>
    <message>
        <source>%1 · review</source>
        <translation>%1 · 待复核</translation>
    </message>
    <message>
        <source>Risk</source>
        <translation>风险</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Page</source>
        <translation>页</translation>
    </message>
    <message>
        <source>Clause</source>
        <translation>条款</translation>
    </message>
    <message>
        <source>Text</source>
        <translation>文本</translation>
    </message>
    <message>
        <source>Confidence</source>
        <translation>置信度</translation>
    </message>
    <message>
        <source>%1 · model</source>
        <translation>%1 · 模型</translation>
    </message>
</context>
<context>
    <name>cw::ui::FirstRunPage</name>
    <message>
        <source>%1 GB</source>
        <translation>%1 GB</translation>
    </message>
    <message>
        <source>Welcome to Clausewright</source>
        <translation>欢迎使用 Clausewright</translation>
    </message>
    <message>
        <source>&lt;b&gt;The built-in clause heads work now, without a model.&lt;/b&gt; Drop a contract (PDF, DOCX or TXT) on the window or choose File ▸ Open: every clause is classified into the CUAD categories, its key terms are extracted and it is rated against the playbook.</source>
        <translation>&lt;b&gt;内置的条款识别头现在即可使用，无需模型。&lt;/b&gt;把合同（PDF、DOCX 或 TXT）拖到窗口上，或选择“文件 ▸ 打开”：每个条款都会归入 CUAD 类别，提取关键条款内容，并按审阅规则评定风险。</translation>
    </message>
    <message>
        <source>&lt;b&gt;A language model can check their work.&lt;/b&gt; Choose one in Model ▸ Model Settings: a GGUF file as published for llama.cpp, or a Hugging Face model folder, of Qwen3-30B-A3B or Qwen3.6-35B-A3B. It runs on this computer, on an NVIDIA GPU where there is one, else on the CPU (slower). The weights need about:</source>
        <translation>&lt;b&gt;语言模型可以复核它们的结果。&lt;/b&gt;在“模型 ▸ 模型设置”中选择模型：为 llama.cpp 发布的 GGUF 文件，或 Hugging Face 模型文件夹，支持 Qwen3-30B-A3B 和 Qwen3.6-35B-A3B。模型在本机运行：有 NVIDIA GPU 时用 GPU，否则用 CPU（较慢）。权重大约需要：</translation>
    </message>
    <message>
        <source>plus the KV cache for the context length. A 24 GB GPU takes the Q4_K_M files (the 35B with a short context), 48 GB the Q8_0 files, 80 GB and more BF16. Model Settings reads the file you choose and shows its memory plan (&lt;tt&gt;clausewright-cli inspect&lt;/tt&gt;) before anything is loaded.</source>
        <translation>另加与上下文长度相应的 KV 缓存。24 GB 显存可装下 Q4_K_M 文件（35B 需用较短的上下文），48 GB 可装下 Q8_0 文件，80 GB 及以上可用 BF16。模型设置会先读取所选文件并显示其内存计划（&lt;tt&gt;clausewright-cli inspect&lt;/tt&gt;），然后才加载。</translation>
    </message>
    <message>
        <source>Start with the &amp;Fast Heads</source>
        <translation>先用快速识别头开始(&amp;F)</translation>
    </message>
    <message>
        <source>Open the &amp;Sample Contract</source>
        <translation>打开示例合同(&amp;S)</translation>
    </message>
    <message>
        <source>Choose a &amp;Model…</source>
        <translation>选择模型(&amp;M)…</translation>
    </message>
    <message>
        <source>Your review history and the plugins you add are kept in &lt;tt&gt;%1&lt;/tt&gt;. Removing the program leaves them there.</source>
        <translation>审阅历史和您添加的插件保存在 &lt;tt&gt;%1&lt;/tt&gt;。卸载程序时它们会保留。</translation>
    </message>
</context>
<context>
    <name>cw::ui::HistoryDialog</name>
    <message>
        <source>Review history</source>
        <translation>审阅历史</translation>
    </message>
    <message>
        <source>Search contracts and findings (words, &quot;phrases&quot;, prefix*)…</source>
        <translation>搜索合同与发现项（词语、&quot;短语&quot;、前缀*）…</translation>
    </message>
    <message>
        <source>Search the history</source>
        <translation>搜索历史记录</translation>
    </message>
    <message>
        <source>Saved reviews</source>
        <translation>已保存的审阅</translation>
    </message>
    <message>
        <source>&amp;Open</source>
        <translation>打开(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Delete</source>
        <translation>删除(&amp;D)</translation>
    </message>
    <message numerus="yes">
        <source>%n review(s)</source>
        <translation>
            <numerusform>共 %n 条审阅</numerusform>
        </translation>
    </message>
    <message>
        <source>Delete review</source>
        <translation>删除审阅记录</translation>
    </message>
    <message>
        <source>Delete this review from the history? This cannot be undone.</source>
        <translation>从历史记录中删除此审阅？此操作无法撤销。</translation>
    </message>
</context>
<context>
    <name>cw::ui::HistoryListModel</name>
    <message>
        <source>%1 high · %2 medium · %3 low</source>
        <translation>高 %1 · 中 %2 · 低 %3</translation>
    </message>
    <message>
        <source>fast heads</source>
        <translation>快速模型</translation>
    </message>
    <message>
        <source>Contract</source>
        <translation>合同</translation>
    </message>
    <message>
        <source>Reviewed</source>
        <translation>审阅时间</translation>
    </message>
    <message>
        <source>Pages</source>
        <translation>页数</translation>
    </message>
    <message>
        <source>Match</source>
        <translation>匹配</translation>
    </message>
    <message>
        <source>Findings</source>
        <translation>发现项</translation>
    </message>
    <message>
        <source>Risks</source>
        <translation>风险</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
</context>
<context>
    <name>cw::ui::MainWindow</name>
    <message>
        <source>Clausewright</source>
        <translation>Clausewright</translation>
    </message>
    <message>
        <source>Drop a contract here (PDF, DOCX or TXT)
or choose File ▸ Open</source>
        <translation>将合同拖放到此处（PDF、DOCX 或 TXT）
或选择 文件 ▸ 打开</translation>
    </message>
    <message>
        <source>Contract drop zone</source>
        <translation>合同拖放区</translation>
    </message>
    <message>
        <source>Reviewing %1…</source>
        <translation>正在审阅 %1…</translation>
    </message>
    <message numerus="yes">
        <source>%n more contract(s) queued</source>
        <translation>
            <numerusform>另有 %n 份合同在排队</numerusform>
        </translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open Contract…</source>
        <translation>打开合同(&amp;O)…</translation>
    </message>
    <message>
        <source>Open contract</source>
        <translation>打开合同</translation>
    </message>
    <message>
        <source>Contracts (*.pdf *.docx *.txt);;All files (*)</source>
        <translation>合同 (*.pdf *.docx *.txt);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Export Report…</source>
        <translation>导出报告(&amp;E)…</translation>
    </message>
    <message>
        <source>Ctrl+E</source>
        <translation>Ctrl+E</translation>
    </message>
    <message>
        <source>&amp;History…</source>
        <translation>历史记录(&amp;H)…</translation>
    </message>
    <message>
        <source>Ctrl+H</source>
        <translation>Ctrl+H</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;Review</source>
        <translation>审阅(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Filter Clauses</source>
        <translation>筛选条款(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Cancel Review</source>
        <translation>取消审阅(&amp;C)</translation>
    </message>
    <message>
        <source>Choose &amp;Playbook…</source>
        <translation>选择审查手册(&amp;P)…</translation>
    </message>
    <message>
        <source>Choose playbook</source>
        <translation>选择审查手册</translation>
    </message>
    <message>
        <source>Playbooks (*.yaml *.yml *.json)</source>
        <translation>审查手册 (*.yaml *.yml *.json)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Zoom &amp;In</source>
        <translation>放大(&amp;I)</translation>
    </message>
    <message>
        <source>Zoom &amp;Out</source>
        <translation>缩小(&amp;O)</translation>
    </message>
    <message>
        <source>&amp;Fit Width</source>
        <translation>适合宽度(&amp;F)</translation>
    </message>
    <message>
        <source>Ctrl+0</source>
        <translation>Ctrl+0</translation>
    </message>
    <message>
        <source>&amp;Next Page</source>
        <translation>下一页(&amp;N)</translation>
    </message>
    <message>
        <source>Ctrl+Down</source>
        <translation>Ctrl+Down</translation>
    </message>
    <message>
        <source>&amp;Previous Page</source>
        <translation>上一页(&amp;P)</translation>
    </message>
    <message>
        <source>Ctrl+Up</source>
        <translation>Ctrl+Up</translation>
    </message>
    <message>
        <source>&amp;Copy Selection</source>
        <translation>复制所选(&amp;C)</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>&amp;Model</source>
        <translation>模型(&amp;M)</translation>
    </message>
    <message>
        <source>Model &amp;Settings…</source>
        <translation>模型设置(&amp;S)…</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About Clausewright</source>
        <translation>关于 Clausewright(&amp;A)</translation>
    </message>
    <message>
        <source>About Clausewright</source>
        <translation>关于 Clausewright</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Clausewright %1&lt;/h3&gt;&lt;p&gt;Contract review with a language model that runs on this computer. Nothing leaves the machine.&lt;/p&gt;&lt;p&gt;Sample and test contracts: CUAD v1, The Atticus Project, CC BY 4.0.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Clausewright %1&lt;/h3&gt;&lt;p&gt;由在本机运行的语言模型进行合同审阅。任何数据都不会离开本机。&lt;/p&gt;&lt;p&gt;示例与测试合同：CUAD v1，The Atticus Project，CC BY 4.0。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Review progress</source>
        <translation>审阅进度</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>Cancel review</source>
        <translation>取消审阅</translation>
    </message>
    <message>
        <source>No model loaded: reviews use the fast heads.</source>
        <translation type="vanished">未加载模型：审阅使用快速识别模型。</translation>
    </message>
    <message>
        <source>Model: %1 · device %2 · context %3</source>
        <translation type="vanished">模型：%1 · 设备 %2 · 上下文 %3</translation>
    </message>
    <message>
        <source>Reading</source>
        <translation>读取</translation>
    </message>
    <message>
        <source>Segmenting</source>
        <translation>切分条款</translation>
    </message>
    <message>
        <source>Finding clauses</source>
        <translation>识别条款</translation>
    </message>
    <message>
        <source>Model review</source>
        <translation>模型审阅</translation>
    </message>
    <message>
        <source>Checking the playbook</source>
        <translation>对照审查手册</translation>
    </message>
    <message>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <source>%1 %2/%3</source>
        <translation>%1 %2/%3</translation>
    </message>
    <message>
        <source>%1 — Clausewright</source>
        <translation>%1 — Clausewright</translation>
    </message>
    <message>
        <source>The review is shown but could not be saved to the history: %1</source>
        <translation>审阅结果已显示，但无法保存到历史记录：%1</translation>
    </message>
    <message>
        <source>Your correction could not be saved: %1</source>
        <translation>无法保存您的更正：%1</translation>
    </message>
    <message>
        <source>Correction saved.</source>
        <translation>更正已保存。</translation>
    </message>
    <message>
        <source>Report written to %1</source>
        <translation>报告已写入 %1</translation>
    </message>
    <message>
        <source>Export report</source>
        <translation>导出报告</translation>
    </message>
    <message>
        <source>PDF report (*.pdf);;HTML report (*.html);;Markdown (*.md);;JSON (*.json);;CSV of findings (*.csv)</source>
        <translation>PDF 报告 (*.pdf);;HTML 报告 (*.html);;Markdown (*.md);;JSON (*.json);;发现项 CSV (*.csv)</translation>
    </message>
    <message>
        <source>Language changed: menus update when Clausewright restarts.</source>
        <translation>语言已更改：重新启动 Clausewright 后菜单将更新。</translation>
    </message>
    <message>
        <source>That language is not available.</source>
        <translation>该语言不可用。</translation>
    </message>
    <message>
        <source>Memory this program uses (resident)</source>
        <translation>本程序占用的内存（常驻）</translation>
    </message>
    <message>
        <source>Fast heads only — no model loaded</source>
        <translation>仅使用快速识别模型 — 未加载语言模型</translation>
    </message>
    <message>
        <source>Reviews use the built-in clause heads. Choose a model in Model ▸ Model Settings for the language model&apos;s notes.</source>
        <translation>审阅使用内置的条款识别模型。如需语言模型的意见，请在 模型 ▸ 模型设置 中选择模型。</translation>
    </message>
    <message>
        <source>Device: CPU</source>
        <translation>设备：CPU</translation>
    </message>
    <message>
        <source>Model: %1 · context %2</source>
        <translation>模型：%1 · 上下文 %2</translation>
    </message>
    <message>
        <source>CUDA GPU %1</source>
        <translation>CUDA GPU %1</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message numerus="yes">
        <source>Device: %1 · %n thread(s)</source>
        <translation type="vanished">
            <numerusform>设备：%1 · %n 个线程</numerusform>
        </translation>
    </message>
    <message>
        <source>Device: %1</source>
        <translation>设备：%1</translation>
    </message>
    <message>
        <source>Memory: %1</source>
        <translation>内存：%1</translation>
    </message>
    <message>
        <source>%1 was not opened: it needs its password.</source>
        <translation>未打开 %1：需要输入其密码。</translation>
    </message>
    <message>
        <source>“%1” is protected by a password.
Password:</source>
        <translation>“%1”受密码保护。
密码：</translation>
    </message>
    <message>
        <source>Password required</source>
        <translation>需要密码</translation>
    </message>
    <message>
        <source>Password for %1</source>
        <translation>%1 的密码</translation>
    </message>
    <message>
        <source>That password does not open “%1”. Try again:</source>
        <translation>该密码无法打开“%1”。请重试：</translation>
    </message>
    <message>
        <source>Review of %1 cancelled.</source>
        <translation>已取消对 %1 的审阅。</translation>
    </message>
    <message numerus="yes">
        <source>Last review: %n page(s) in %1 s</source>
        <translation type="vanished">
            <numerusform>上次审阅：%n 页，用时 %1 秒</numerusform>
        </translation>
    </message>
    <message>
        <source>Last review: %1 s</source>
        <translation>上次审阅：用时 %1 秒</translation>
    </message>
    <message>
        <source>Device: %1 · threads: %2</source>
        <translation>设备：%1 · 线程数：%2</translation>
    </message>
    <message>
        <source>Last review: 1 page in %1 s</source>
        <translation>上次审阅：1 页，用时 %1 秒</translation>
    </message>
    <message>
        <source>Last review: %1 pages in %2 s</source>
        <translation>上次审阅：%1 页，用时 %2 秒</translation>
    </message>
    <message>
        <source>The sample contract is not installed.</source>
        <translation>示例合同未安装。</translation>
    </message>
    <message>
        <source>&amp;Getting Started</source>
        <translation>入门(&amp;G)</translation>
    </message>
</context>
<context>
    <name>cw::ui::MessageBar</name>
    <message>
        <source>Message</source>
        <translation>消息</translation>
    </message>
    <message>
        <source>Dismiss message</source>
        <translation>关闭消息</translation>
    </message>
</context>
<context>
    <name>cw::ui::ModelSettingsDialog</name>
    <message>
        <source>Model settings</source>
        <translation>模型设置</translation>
    </message>
    <message>
        <source>Model path</source>
        <translation>模型路径</translation>
    </message>
    <message>
        <source>A .gguf file or a Hugging Face model folder (drop it here)</source>
        <translation>一个 .gguf 文件或 Hugging Face 模型文件夹（可拖放到此处）</translation>
    </message>
    <message>
        <source>&amp;File…</source>
        <translation>文件(&amp;F)…</translation>
    </message>
    <message>
        <source>F&amp;older…</source>
        <translation>文件夹(&amp;O)…</translation>
    </message>
    <message>
        <source>&amp;Model:</source>
        <translation>模型(&amp;M)：</translation>
    </message>
    <message>
        <source>Device</source>
        <translation>设备</translation>
    </message>
    <message>
        <source>GPU %1</source>
        <translation>GPU %1</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>&amp;Device:</source>
        <translation>设备(&amp;D)：</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>上下文长度</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个词元</translation>
    </message>
    <message>
        <source>&amp;Context:</source>
        <translation>上下文(&amp;C)：</translation>
    </message>
    <message>
        <source>CPU threads</source>
        <translation>CPU 线程</translation>
    </message>
    <message>
        <source>all cores</source>
        <translation>全部核心</translation>
    </message>
    <message>
        <source>CPU &amp;threads:</source>
        <translation>CPU 线程(&amp;T)：</translation>
    </message>
    <message>
        <source>Model summary and memory plan</source>
        <translation>模型摘要与内存规划</translation>
    </message>
    <message>
        <source>Choose a model to see its architecture, size and the memory it needs.</source>
        <translation>选择一个模型，查看其架构、大小和所需内存。</translation>
    </message>
    <message>
        <source>Choose a GGUF model</source>
        <translation>选择 GGUF 模型</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 模型 (*.gguf)</translation>
    </message>
    <message>
        <source>Choose a Hugging Face model folder</source>
        <translation>选择 Hugging Face 模型文件夹</translation>
    </message>
    <message>
        <source>Reading %1…</source>
        <translation>正在读取 %1…</translation>
    </message>
    <message>
        <source>The model could not be read.</source>
        <translation>无法读取该模型。</translation>
    </message>
    <message>
        <source>Could not run clausewright-cli: %1</source>
        <translation>无法运行 clausewright-cli：%1</translation>
    </message>
</context>
<context>
    <name>cw::ui::PdfView</name>
    <message>
        <source>Contract pages</source>
        <translation>合同页面</translation>
    </message>
</context>
<context>
    <name>cw::ui::ReviewView</name>
    <message>
        <source>Contract text</source>
        <translation>合同文本</translation>
    </message>
    <message>
        <source>Filter clauses (category, text, page)…</source>
        <translation>筛选条款（类别、文本、页码）…</translation>
    </message>
    <message>
        <source>Filter clauses</source>
        <translation>筛选条款</translation>
    </message>
    <message>
        <source>Minimum risk</source>
        <translation>最低风险</translation>
    </message>
    <message>
        <source>All risks</source>
        <translation>全部风险</translation>
    </message>
    <message>
        <source>Low and above</source>
        <translation>低及以上</translation>
    </message>
    <message>
        <source>Medium and above</source>
        <translation>中及以上</translation>
    </message>
    <message>
        <source>High only</source>
        <translation>仅高风险</translation>
    </message>
    <message>
        <source>Clauses found</source>
        <translation>已识别的条款</translation>
    </message>
</context>
</TS>

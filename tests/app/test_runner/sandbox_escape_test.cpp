// The sandbox against the escapes generated code could try, with a real bubblewrap: every
// attempt is stopped, reported in one line, and leaves the user's files untouched. Skipped
// where bwrap is missing or cannot make namespaces here.
#include "app/test_runner/sandbox.h"
#include "tests/app/test_runner/sandbox_skip.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <arpa/inet.h>
#include <csignal>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace cw;

namespace {

const char* kPython = "/usr/bin/python3";

} // namespace

class SandboxEscapeTest : public QObject {
    Q_OBJECT

    std::optional<Sandbox> m_sandbox;
    QTemporaryDir m_work;

    SandboxResult runPython(const QString& script, SandboxLimits limits)
    {
        auto result = m_sandbox->run(
            { { kPython, "-c", script.toStdString() }, m_work.path().toStdString(), {} }, limits);
        if (!result)
            qFatal("sandbox: %s", result.error().message.c_str());
        return *result;
    }
    SandboxResult runPython(const QString& script)
    {
        return runPython(script, m_sandbox->limits());
    }

private slots:
    void initTestCase()
    {
        if (!QFile::exists(kPython))
            CW_SKIP_NO_SANDBOX("no /usr/bin/python3 to write the escapes in");
        SandboxLimits limits;
        limits.wallSeconds = 20;
        auto sandbox = Sandbox::create(limits);
        if (!sandbox)
            CW_SKIP_NO_SANDBOX(sandbox.error().message.c_str());
        m_sandbox = *sandbox;
        QVERIFY(m_work.isValid());
        QVERIFY(Sandbox::prepareWorkDir(m_work.path().toStdString()).ok());
    }

    void refusesWithoutBwrap()
    {
        auto missing = Sandbox::create({}, "/nonexistent/bwrap");
        QVERIFY(!missing.ok());
        QVERIFY2(QString::fromStdString(missing.error().message).contains("bubblewrap"),
            missing.error().message.c_str());
    }

    void runsCodeInTheWorkFolder()
    {
        const SandboxResult r = runPython(
            "import os; open('made.txt','w').write('ok'); print(os.getcwd(), os.environ['HOME'])");
        QVERIFY2(r.succeeded(), r.output.c_str());
        QCOMPARE(QString::fromStdString(r.output).trimmed(), QString("/sandbox /sandbox"));
        QVERIFY(QFile::exists(m_work.filePath("made.txt")));
    }

    void cannotWriteToHome()
    {
        const QString home = QDir::homePath();
        const QString target = home + "/cw_sandbox_escape.txt";
        QFile::remove(target);
        const SandboxResult r
            = runPython(QString("open(%1,'w').write('escaped')").arg("'" + target + "'"));
        QVERIFY(!r.succeeded());
        QVERIFY2(r.output.find("Error") != std::string::npos, r.output.c_str());
        QVERIFY(!QFile::exists(target));
        // Nor to /usr, which is there but read-only.
        const SandboxResult usr = runPython("open('/usr/cw_escape','w')");
        QVERIFY(usr.output.find("Read-only file system") != std::string::npos);
    }

    void cannotReadOutside()
    {
        QTemporaryDir secretDir;
        QFile secret(secretDir.filePath("secret.txt"));
        QVERIFY(secret.open(QIODevice::WriteOnly));
        secret.write("top secret");
        secret.close();
        QStringList outside
            = { secret.fileName(), QString("/etc/passwd"), QDir::homePath() + "/.bashrc" };
        if (!QStringLiteral(CW_SOURCE_DIR).startsWith("/usr/")) // /usr is mounted, read-only
            outside.append(QStringLiteral(CW_SOURCE_DIR "/README.md"));
        for (const QString& path : outside) {
            const SandboxResult r = runPython(QString("print(open('%1').read())").arg(path));
            QVERIFY2(!r.succeeded(), qPrintable(path));
            QVERIFY2(
                r.output.find("No such file or directory") != std::string::npos, r.output.c_str());
        }
        // The host's processes are not visible either (own PID namespace).
        const SandboxResult procs
            = runPython("import os; print(len([p for p in os.listdir('/proc') if p.isdigit()]))");
        QVERIFY2(procs.succeeded(), procs.output.c_str());
        QVERIFY(QString::fromStdString(procs.output).trimmed().toInt() <= 3);
    }

    void cannotOpenASocket()
    {
        // A server on the host's loopback: the sandbox has its own, empty network namespace.
        const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        QVERIFY(server >= 0);
        sockaddr_in address {};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QCOMPARE(::bind(server, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        QCOMPARE(::listen(server, 4), 0);
        socklen_t length = sizeof address;
        ::getsockname(server, reinterpret_cast<sockaddr*>(&address), &length);
        const int port = ntohs(address.sin_port);
        const SandboxResult local
            = runPython(QString("import socket; s=socket.socket(); "
                                "s.settimeout(3); s.connect(('127.0.0.1', %1))")
                            .arg(port));
        QVERIFY(!local.succeeded());
        QVERIFY2(local.output.find("Connection refused") != std::string::npos
                || local.output.find("unreachable") != std::string::npos,
            local.output.c_str());
        QVERIFY(::accept(server, nullptr, nullptr) < 0); // nobody ever connected
        ::close(server);
        const SandboxResult outside = runPython("import socket; s=socket.socket(); "
                                                "s.settimeout(3); s.connect(('1.1.1.1', 53))");
        QVERIFY(!outside.succeeded());
        QVERIFY2(outside.output.find("Network is unreachable") != std::string::npos,
            outside.output.c_str());
    }

    void forkBombStopsAtTheProcessLimit()
    {
        SandboxLimits limits = m_sandbox->limits();
        limits.processes = 32;
        limits.wallSeconds = 4;
        QElapsedTimer timer;
        timer.start();
        const SandboxResult r = runPython("import os, sys\n"
                                          "n = 0\n"
                                          "try:\n"
                                          "    for i in range(10000):\n"
                                          "        if os.fork() == 0:\n"
                                          "            import time; time.sleep(30); os._exit(0)\n"
                                          "        n += 1\n"
                                          "except OSError as e:\n"
                                          "    print('forks', n, e.strerror, flush=True)\n",
            limits);
        QVERIFY2(r.output.find("Resource temporarily unavailable") != std::string::npos,
            r.output.c_str());
        const int forks = QString::fromStdString(r.output).section(' ', 1, 1).toInt();
        QVERIFY2(forks > 0 && forks < 32, r.output.c_str());
        // The sleeping children died with the sandbox instead of living on.
        QVERIFY(timer.elapsed() < 8000);
        QVERIFY(!r.timedOut);
    }

    void endlessLoopStopsAtTheCpuLimit()
    {
        SandboxLimits limits = m_sandbox->limits();
        limits.cpuSeconds = 1;
        const SandboxResult r = runPython("while True: pass", limits);
        QCOMPARE(r.signal, SIGXCPU);
        QCOMPARE(QString::fromStdString(r.limitMessage(limits)),
            QString("stopped: used its 1 s of CPU time"));
    }

    void sleepingForeverStopsAtTheWallTime()
    {
        SandboxLimits limits = m_sandbox->limits();
        limits.wallSeconds = 1.5;
        QElapsedTimer timer;
        timer.start();
        const SandboxResult r = runPython("import time; time.sleep(600)", limits);
        QVERIFY(r.timedOut);
        QVERIFY(timer.elapsed() < 5000);
        QCOMPARE(QString::fromStdString(r.limitMessage(limits)),
            QString("stopped: ran past the 1 s wall-time limit"));
    }

    void hundredMegabytesOfOutputAreCut()
    {
        QElapsedTimer timer;
        timer.start();
        const SandboxResult r
            = runPython("import sys\nfor i in range(100): sys.stdout.write('x' * (1 << 20))");
        QVERIFY(r.outputLimit);
        QCOMPARE(r.output.size(), m_sandbox->limits().outputBytes);
        QVERIFY(timer.elapsed() < 10000);
        QCOMPARE(QString::fromStdString(r.limitMessage(m_sandbox->limits())),
            QString("stopped: printed more than 1 MiB of output"));
    }

    void unboundedAllocationFails()
    {
        SandboxLimits limits = m_sandbox->limits();
        limits.addressSpaceBytes = 512ull << 20;
        const SandboxResult r
            = runPython("x = []\nwhile True: x.append(bytearray(1 << 24))", limits);
        QVERIFY(!r.succeeded());
        QVERIFY2(r.output.find("MemoryError") != std::string::npos, r.output.c_str());
    }

    void hugeFilesStopAtTheFileSizeLimit()
    {
        SandboxLimits limits = m_sandbox->limits();
        limits.fileSizeBytes = 8ull << 20;
        const SandboxResult r = runPython(
            "f = open('big.bin', 'wb')\nfor i in range(100): f.write(b'x' * (1 << 20)); f.flush()",
            limits);
        QVERIFY(!r.succeeded());
        // Python ignores SIGXFSZ, so the write fails with EFBIG instead.
        QVERIFY2(r.output.find("File too large") != std::string::npos || r.signal == SIGXFSZ,
            r.output.c_str());
        QVERIFY(QFileInfo(m_work.filePath("big.bin")).size() <= qint64(limits.fileSizeBytes));
    }

    // The seccomp filter is installed on what runs inside and refuses the calls escapes are
    // made of; threads and processes still start (clone3 falls back to clone).
    void seccompRefusesWhatEscapesNeed()
    {
        if (QSysInfo::currentCpuArchitecture() != QLatin1String("x86_64"))
            QSKIP("the raw system call numbers below are x86_64's");
        const SandboxResult r = runPython(R"(
import ctypes, errno, os, threading
libc = ctypes.CDLL(None, use_errno=True)
def call(name, *args):
    return 'ok' if getattr(libc, name)(*args) >= 0 else errno.errorcode[ctypes.get_errno()]
status = open('/proc/self/status').read()
print('seccomp', status.split('Seccomp:')[1].split()[0])
print('ptrace', call('ptrace', 0, 0, 0, 0))
print('unshare', call('unshare', 0x10000000))
print('keyctl', call('syscall', 250, 0, -3, 0))
print('bpf', call('syscall', 321, 0, 0, 0))
print('userfaultfd', call('syscall', 323, 0))
print('mount', call('mount', b'none', b'/sandbox', b'tmpfs', 0, None))
print('clone3', call('syscall', 435, 0, 0))
t = threading.Thread(target=lambda: None); t.start(); t.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
print('fork', os.waitpid(pid, 0)[1] >> 8)
)");
        QVERIFY2(r.succeeded(), r.output.c_str());
        for (const char* expected : { "seccomp 2", "ptrace EPERM", "unshare EPERM", "keyctl EPERM",
                 "bpf EPERM", "userfaultfd EPERM", "mount EPERM", "clone3 ENOSYS", "fork 7" })
            QVERIFY2(r.output.find(expected) != std::string::npos,
                (std::string(expected) + " not in:\n" + r.output).c_str());
    }

    // Several processes that each stay under the per-process limit are stopped together by
    // the run's memory limit (a cgroup per run). Where no cgroup can be made, only the
    // per-process limit holds: then this is skipped and the note says why.
    void memoryLimitHoldsForAllProcessesTogether()
    {
        if (!m_sandbox->sharesMemoryLimit())
            QSKIP(m_sandbox->memoryNote().c_str());
        QVERIFY2(m_sandbox->memoryNote().find("together") != std::string::npos,
            m_sandbox->memoryNote().c_str());
        SandboxLimits limits = m_sandbox->limits();
        limits.memoryBytes = 256ull << 20;
        limits.addressSpaceBytes = 1ull << 30; // each process alone stays far below
        const SandboxResult r = runPython(R"(
import os, time
children = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        block = b'x' * (120 << 20)
        time.sleep(2)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print('all done')
)",
            limits);
        QVERIFY2(r.memoryLimit, r.output.c_str());
        QVERIFY(!r.succeeded());
        QCOMPARE(QString::fromStdString(r.limitMessage(limits)),
            QString("stopped: its processes together used more than the 256 MiB memory limit"));
        // The same processes under a limit they fit in run to the end.
        limits.memoryBytes = 1ull << 30;
        const SandboxResult fits = runPython(
            "import os\nfor i in range(2):\n    if os.fork() == 0:\n        b = b'x' * (60 << 20)\n"
            "        os._exit(0)\nos.wait(); os.wait(); print('all done')",
            limits);
        QVERIFY2(fits.succeeded() && !fits.memoryLimit, fits.output.c_str());
    }

    void cancelStopsItAtOnce()
    {
        QElapsedTimer timer;
        timer.start();
        auto r = m_sandbox->run(
            { { kPython, "-c", "import time; time.sleep(60)" }, m_work.path().toStdString(), {} },
            [&] { return timer.elapsed() > 300; });
        QVERIFY(r.ok());
        QVERIFY(!r->succeeded());
        QVERIFY(timer.elapsed() < 3000);
    }
};

CW_SANDBOX_TEST_MAIN(SandboxEscapeTest)
#include "sandbox_escape_test.moc"

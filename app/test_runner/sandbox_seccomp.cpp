#include "app/test_runner/sandbox_seccomp.h"

#include <cerrno>
#include <cstring>
#include <mutex>
#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

namespace cw {
namespace {

constexpr const char* kRefused[] = { "ptrace", "process_vm_readv", "process_vm_writev", "mount",
    "umount2", "pivot_root", "move_mount", "open_tree", "fsopen", "fsconfig", "fsmount", "fspick",
    "mount_setattr", "keyctl", "add_key", "request_key", "bpf", "userfaultfd", "perf_event_open",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "open_by_handle_at", "swapon", "swapoff" };

Result<std::vector<char>> buildProgram()
{
    scmp_filter_ctx filter = seccomp_init(SCMP_ACT_ALLOW);
    if (!filter)
        return makeError("sandbox: libseccomp cannot make a filter");
    struct Release {
        scmp_filter_ctx filter;
        ~Release() { seccomp_release(filter); }
    } release { filter };
    auto refuse = [&](const char* name, int error, unsigned count = 0,
                      const scmp_arg_cmp* condition = nullptr) -> Result<void> {
        const int call = seccomp_syscall_resolve_name(name);
        if (call == __NR_SCMP_ERROR)
            return {}; // not a system call of this architecture
        const int rc = condition
            ? seccomp_rule_add_array(filter, SCMP_ACT_ERRNO(error), call, count, condition)
            : seccomp_rule_add(filter, SCMP_ACT_ERRNO(error), call, 0);
        if (rc != 0)
            return makeError(
                std::string("sandbox: seccomp rule for ") + name + ": " + std::strerror(-rc));
        return {};
    };
    for (const char* name : kRefused) {
        if (auto added = refuse(name, EPERM); !added)
            return added.error();
    }
    // New user namespaces: the flag in unshare's and clone's first argument, setns's second
    // (or 0 there, which is any kind of namespace). Built by hand: libseccomp's SCMP_A0
    // macros are C compound literals.
    const scmp_arg_cmp userFlag0 { 0, SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER };
    const scmp_arg_cmp userFlag1 { 1, SCMP_CMP_MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER };
    const scmp_arg_cmp anyKind { 1, SCMP_CMP_EQ, 0, 0 };
    for (const auto& [name, condition] :
        { std::pair { "unshare", &userFlag0 }, std::pair { "clone", &userFlag0 },
            std::pair { "setns", &userFlag1 }, std::pair { "setns", &anyKind } }) {
        if (auto added = refuse(name, EPERM, 1, condition); !added)
            return added.error();
    }
    if (auto added = refuse("clone3", ENOSYS); !added)
        return added.error();

    const int fd = ::memfd_create("cw-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return makeError(std::string("sandbox: memfd_create: ") + std::strerror(errno));
    std::vector<char> program;
    if (const int rc = seccomp_export_bpf(filter, fd); rc != 0) {
        ::close(fd);
        return makeError(
            std::string("sandbox: cannot export the seccomp filter: ") + std::strerror(-rc));
    }
    const off_t size = ::lseek(fd, 0, SEEK_END);
    program.resize(std::size_t(size > 0 ? size : 0));
    const bool read = size > 0 && ::pread(fd, program.data(), program.size(), 0) == size;
    ::close(fd);
    if (!read)
        return makeError("sandbox: the exported seccomp filter is empty");
    return program;
}

} // namespace

Result<std::vector<char>> sandboxSeccompProgram()
{
    static std::once_flag once;
    static Result<std::vector<char>> program = makeError("sandbox: no seccomp filter");
    std::call_once(once, [] { program = buildProgram(); });
    return program;
}

std::vector<const char*> sandboxRefusedSyscalls()
{
    std::vector<const char*> names(std::begin(kRefused), std::end(kRefused));
    names.insert(
        names.end(), { "unshare(CLONE_NEWUSER)", "clone(CLONE_NEWUSER)", "setns", "clone3" });
    return names;
}

} // namespace cw

#include "app/generation/backend_order.h"

namespace cw::generation {

QString backendOrderKey(BackendOrder order)
{
    switch (order) {
    case BackendOrder::LocalOnly:
        return QStringLiteral("local");
    case BackendOrder::RemoteOnly:
        return QStringLiteral("remote");
    case BackendOrder::LocalThenRemote:
        return QStringLiteral("local,remote");
    case BackendOrder::RemoteThenLocal:
        return QStringLiteral("remote,local");
    }
    return QStringLiteral("local");
}

std::optional<BackendOrder> backendOrderFromKey(const QString& key)
{
    for (BackendOrder order : { BackendOrder::LocalOnly, BackendOrder::RemoteOnly,
             BackendOrder::LocalThenRemote, BackendOrder::RemoteThenLocal })
        if (backendOrderKey(order) == key)
            return order;
    return std::nullopt;
}

QList<Backend> backendsOf(BackendOrder order)
{
    switch (order) {
    case BackendOrder::LocalOnly:
        return { Backend::InProcess };
    case BackendOrder::RemoteOnly:
        return { Backend::Remote };
    case BackendOrder::LocalThenRemote:
        return { Backend::InProcess, Backend::Remote };
    case BackendOrder::RemoteThenLocal:
        return { Backend::Remote, Backend::InProcess };
    }
    return { Backend::InProcess };
}

} // namespace cw::generation

#include "success_close.h"

namespace tributary::postgres {

SuccessClose::SuccessClose(const SourceGate::SlotSuccess& slot, const char* lock)
    : source_id_(slot.source_id),
      lock_(lock),
      lease_(slot.lease),
      pause_ms_(slot.success.pause.count()),
      interval_ms_(slot.interval.count()),
      drained_(slot.success.drained),
      backlog_(slot.success.backlog ? std::to_string(*slot.success.backlog) : std::string()) {}

void SuccessClose::run(pqxx::transaction_base& tx, const char* statement) const {
    tx.exec_prepared(statement, source_id_, lock_, lease_, pause_ms_, interval_ms_, drained_, backlog());
}

}  // namespace tributary::postgres

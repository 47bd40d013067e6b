#include "engine/models/step_timers.h"

namespace cw::engine {

const char* stepPartName(StepPart part)
{
    switch (part) {
    case StepPart::Embedding:
        return "embedding";
    case StepPart::Norms:
        return "norms, residuals, checks";
    case StepPart::AttentionProjections:
        return "attention projections";
    case StepPart::AttentionCore:
        return "attention core";
    case StepPart::DeltaNetProjections:
        return "DeltaNet projections";
    case StepPart::DeltaNetCore:
        return "DeltaNet core";
    case StepPart::Router:
        return "router";
    case StepPart::ExpertsGateUp:
        return "experts gate+up";
    case StepPart::ExpertsDown:
        return "experts down";
    case StepPart::SharedExpert:
        return "shared expert";
    case StepPart::OutputHead:
        return "output head";
    case StepPart::Count:
        break;
    }
    return "?";
}

} // namespace cw::engine

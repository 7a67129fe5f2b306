package io.fencekeeper.run;

/**
 * How a create ended within the caller's patience: the coordinator's answer, or the run still
 * STAGING (its scope is being staged; the caller answers 202 and the client polls or retries).
 */
public sealed interface CreateOutcome {

  record Answered(RunCoordinator.CreateReply reply) implements CreateOutcome {}

  record StillStaging(RunView run) implements CreateOutcome {}
}

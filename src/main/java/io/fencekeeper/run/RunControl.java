package io.fencekeeper.run;

import io.fencekeeper.run.RunCoordinator.AlreadyExists;
import io.fencekeeper.run.RunCoordinator.CancelRequested;
import io.fencekeeper.run.RunCoordinator.CancelRun;
import io.fencekeeper.run.RunCoordinator.Command;
import io.fencekeeper.run.RunCoordinator.Conflict;
import io.fencekeeper.run.RunCoordinator.ControlAccepted;
import io.fencekeeper.run.RunCoordinator.CreateReply;
import io.fencekeeper.run.RunCoordinator.CreateRun;
import io.fencekeeper.run.RunCoordinator.Created;
import io.fencekeeper.run.RunCoordinator.Event;
import io.fencekeeper.run.RunCoordinator.GetRun;
import io.fencekeeper.run.RunCoordinator.GovernorChanged;
import io.fencekeeper.run.RunCoordinator.GovernorReply;
import io.fencekeeper.run.RunCoordinator.ListRuns;
import io.fencekeeper.run.RunCoordinator.LookedUp;
import io.fencekeeper.run.RunCoordinator.ResumeRun;
import io.fencekeeper.run.RunCoordinator.RunCreated;
import io.fencekeeper.run.RunCoordinator.RunList;
import io.fencekeeper.run.RunCoordinator.RunLookup;
import io.fencekeeper.run.RunCoordinator.RunResumed;
import io.fencekeeper.run.RunCoordinator.RunUnfiled;
import io.fencekeeper.run.RunCoordinator.SetGovernor;
import io.fencekeeper.run.RunCoordinator.State;
import io.fencekeeper.run.governor.GovernorSettings;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.persistence.typed.javadsl.EffectFactories;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;

/**
 * The run coordinator's answers to operators and callers (docs/design.md, "Runs and the
 * coordinator"): create (idempotent), get, list, resume, cancel and the governor's limits, for a
 * run it holds or, looked up in {@code run_record} first, one it filed. It asks {@link RunRules}
 * what is allowed, and journals and answers what they decided. Built by {@link RunCoordinator},
 * which wires it to its commands.
 */
final class RunControl {

  private final EffectFactories<Event, State> effect;
  private final ActorContext<Command> ctx;
  private final RunCoordinator.Dependencies deps;
  private final LiveRuns live;
  private final RunFiling filing;
  private final CoordinatorTicks ticks;

  RunControl(
      EffectFactories<Event, State> effect,
      ActorContext<Command> ctx,
      RunCoordinator.Dependencies deps,
      LiveRuns live,
      RunFiling filing,
      CoordinatorTicks ticks) {
    this.effect = effect;
    this.ctx = ctx;
    this.deps = deps;
    this.live = live;
    this.filing = filing;
    this.ticks = ticks;
  }

  ReplyEffect<Event, State> onCreate(State state, CreateRun cmd) {
    RunRecord existing = state.runs().get(cmd.request().runId());
    if (existing != null) {
      return answerExisting(cmd, existing, view(state, existing));
    }
    return lookUp(cmd, cmd.request().runId()); // it may have ended and been filed
  }

  private ReplyEffect<Event, State> lookUp(Command command, String runId) {
    filing.lookUp(command, runId);
    return effect.noReply();
  }

  /** The run exists: the same parameters answer it, others are a conflict that names them. */
  private ReplyEffect<Event, State> answerExisting(
      CreateRun cmd, RunRecord existing, RunView view) {
    CreateReply reply =
        RunRules.createConflict(existing, cmd.request(), cmd.scopeDigest())
            .<CreateReply>map(conflict -> new Conflict(conflict, view))
            .orElse(new AlreadyExists(view));
    return effect.reply(cmd.replyTo(), reply);
  }

  private ReplyEffect<Event, State> create(State state, CreateRun cmd) {
    RunRequest request = cmd.request();
    if (cmd.scopeId() == null) {
      return effect.reply(
          cmd.replyTo(),
          new Conflict("run " + request.runId() + " has no staged scope; create it again", null));
    }
    RunCreated created =
        new RunCreated(
            request, cmd.scopeId(), cmd.itemCount(), cmd.scopeDigest(), deps.clock().instant());
    return effect
        .persist(created)
        .thenRun(
            s -> {
              RunRecord run = s.runs().get(request.runId());
              ctx.getLog()
                  .info(
                      "run {} created: {} items, deadline {}",
                      run.runId(),
                      run.itemCount(),
                      run.deadline());
              live.start(run, governor(s), false);
              ticks.wake(s.signalOffset());
            })
        .thenReply(cmd.replyTo(), s -> new Created(view(s, s.runs().get(request.runId()))));
  }

  ReplyEffect<Event, State> onGet(State state, GetRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    return effect.reply(cmd.replyTo(), new RunLookup(run == null ? null : view(state, run)));
  }

  ReplyEffect<Event, State> onList(State state, ListRuns cmd) {
    return effect.reply(
        cmd.replyTo(),
        new RunList(state.runs().values().stream().map(run -> view(state, run)).toList()));
  }

  ReplyEffect<Event, State> onResume(State state, ResumeRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    if (run == null) {
      return lookUp(cmd, cmd.runId());
    }
    return resume(cmd, run, List.of());
  }

  /** {@code first}: an event that takes a filed run back before it is resumed. */
  private ReplyEffect<Event, State> resume(ResumeRun cmd, RunRecord run, List<Event> first) {
    var refusal = RunRules.resumeRefusal(run, cmd.newDeadline(), deps.clock().instant());
    if (refusal.isPresent()) {
      return effect.reply(cmd.replyTo(), refusal.get());
    }
    List<Event> events = new java.util.ArrayList<>(first);
    events.add(new RunResumed(run.runId(), cmd.newDeadline(), deps.clock().instant()));
    return effect
        .persist(events)
        .thenRun(
            s -> {
              RunRecord resumed = s.runs().get(run.runId());
              ctx.getLog().info("run {} resumed with deadline {}", run.runId(), resumed.deadline());
              live.start(resumed, governor(s), false);
              ticks.wake(s.signalOffset());
            })
        .thenReply(cmd.replyTo(), s -> new ControlAccepted(view(s, s.runs().get(run.runId()))));
  }

  ReplyEffect<Event, State> onCancel(State state, CancelRun cmd) {
    RunRecord run = state.runs().get(cmd.runId());
    if (run == null) {
      return lookUp(cmd, cmd.runId());
    }
    var refusal = RunRules.cancelRefusal(run.runId(), run.state());
    if (refusal.isPresent()) {
      return effect.reply(cmd.replyTo(), refusal.get());
    }
    return effect
        .persist(new CancelRequested(run.runId(), deps.clock().instant()))
        .thenRun(s -> live.stop(run.runId(), new LiveRun.Stopping("cancelled", true)))
        .thenReply(cmd.replyTo(), s -> new ControlAccepted(view(s, s.runs().get(run.runId()))));
  }

  ReplyEffect<Event, State> onSetGovernor(State state, SetGovernor cmd) {
    return effect
        .persist(new GovernorChanged(cmd.settings(), deps.clock().instant()))
        .thenRun(
            s -> {
              ctx.getLog().info("governor limits changed to {}", cmd.settings());
              live.changeGovernor(cmd.settings());
            })
        .thenReply(cmd.replyTo(), this::governorReply);
  }

  GovernorReply governorReply(State state) {
    return new GovernorReply(governor(state), live.governors());
  }

  GovernorSettings governor(State state) {
    return state.governor() != null ? state.governor() : deps.governor();
  }

  // --- ended runs: filed in run_record, looked up there ---------------------------------------

  /**
   * A command about a run not held here, with what {@code run_record} holds of it. The run may have
   * been created meanwhile: then the command is handled as if it had just arrived. When the table
   * could not be read, nobody is answered (the caller's ask times out: the node is unavailable)
   * rather than a create that could stage an existing run twice.
   */
  ReplyEffect<Event, State> onLookedUp(State state, LookedUp looked) {
    if (looked.failure() != null) {
      ctx.getLog()
          .warn("ended runs could not be read: {}", RunCoordinator.summary(looked.failure()));
      return effect.noReply();
    }
    Optional<EndedRuns.Filed> filed = looked.filed();
    Command command = looked.command();
    if (command instanceof CreateRun create) {
      RunRecord held = state.runs().get(create.request().runId());
      if (held != null) {
        return answerExisting(create, held, view(state, held));
      }
      return filed.isPresent()
          ? answerExisting(create, filed.get().record(), filed.get().view())
          : create(state, create);
    }
    if (command instanceof ResumeRun resume) {
      RunRecord held = state.runs().get(resume.runId());
      if (held != null) {
        return resume(resume, held, List.of());
      }
      if (filed.isEmpty()) {
        return effect.reply(resume.replyTo(), RunRules.unknownRun(resume.runId()));
      }
      EndedRuns.Filed run = filed.get();
      var refusal =
          RunRules.filedResumeRefusal(
              resume.runId(), state.pruning().contains(resume.runId()), run.archive() != null);
      if (refusal.isPresent()) {
        return effect.reply(resume.replyTo(), refusal.get());
      }
      return resume(
          resume,
          run.record(),
          List.of(new RunUnfiled(run.record(), run.signals(), deps.clock().instant())));
    }
    if (command instanceof CancelRun cancel) {
      if (state.runs().containsKey(cancel.runId())) {
        return onCancel(state, cancel);
      }
      return effect.reply(
          cancel.replyTo(),
          filed.isEmpty()
              ? RunRules.unknownRun(cancel.runId())
              : RunRules.cancelRefusal(cancel.runId(), filed.get().record().state()).orElseThrow());
    }
    return effect.noReply();
  }

  private RunView view(State state, RunRecord run) {
    return RunView.of(run, live.progressOf(run.runId()).orElse(null), state.signalsOf(run.runId()));
  }
}

// The nodes now and the nodes wanted for a run's rate chart: GET /api/fleet read at most every two
// seconds while the run is RUNNING and its page is shown (on its live events, no timer of its own),
// each reading kept for the run's samples that follow it. The samples are timed by the node that
// serves the page, the fleet by the coordinator's clock: keying the readings by the samples keeps
// the lines on the chart's own time axis.
import { call } from './api.js';

const EVERY_MS = 2000;
// a reading older than this (the node stopped answering) draws no line rather than a stale one
const FRESH_MS = 10000;

export function fleetSamples() {
  let latest = null;
  let readAt = 0;
  let reading = false;
  const byAt = new Map();

  return {
    /** Reads the fleet if it is time to. */
    async poll(running) {
      if (!running || reading || document.hidden || Date.now() - readAt < EVERY_MS) return;
      reading = true;
      readAt = Date.now();
      try {
        const fleet = await call('/api/fleet');
        latest = { nodes: fleet.nodes, wanted: fleet.wanted, readAt: Date.now() };
      } catch (error) {
        latest = null; // no line where the fleet could not be read
      } finally {
        reading = false;
      }
    },
    /** Files the latest reading under the run's sample taken at `at` (epoch ms). */
    record(at) {
      if (latest && Date.now() - latest.readAt < FRESH_MS) byAt.set(at, latest);
    },
    /** Forgets readings of samples the run's history no longer has (a new snapshot). */
    keep(times) {
      const present = new Set(times);
      for (const at of byAt.keys()) if (!present.has(at)) byAt.delete(at);
    },
    /** The two series along `times`: null where no reading was filed. */
    series(times) {
      const of = (key) => times.map((t) => (byAt.has(t) ? byAt.get(t)[key] : null));
      return { nodes: of('nodes'), wanted: of('wanted') };
    },
    latest: () => latest,
  };
}

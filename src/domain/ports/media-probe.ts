/** The facts of a media file that the platform rules need, read from its bytes. */
export interface ProbedMedia {
  kind: 'image' | 'video';
  mime: string;
  width: number | null;
  height: number | null;
  durationMs: number | null;
}

/** Why a file was refused: not a type we take (or not recognisable), or broken. */
export type ProbeFailure = { problem: 'unsupported'; mime: string | null } | { problem: 'corrupt'; mime: string };

/**
 * Reads what a media file is. Injected like the storage, so the domain runs without ffmpeg in tests
 * and any process that stores media (server, CLI) chooses the implementation.
 */
export interface MediaProbe {
  /** Rejects only when the probe itself cannot run (with ProbeUnavailable), never because of the file. */
  probe(path: string): Promise<ProbedMedia | ProbeFailure>;
}

/**
 * The probe cannot run on this machine (its tool is missing, not executable, or cannot be started):
 * the server's fault, not the file's. The message names the tool and the system's reason, never a
 * path, so it is safe to show the caller.
 */
export class ProbeUnavailable extends Error {
  constructor(
    readonly tool: string,
    /** The system's error code (ENOENT, EACCES, …), or why the tool's package could not be loaded. */
    readonly code: string,
  ) {
    super(`Media probing not available: the server cannot run ${tool} (${code})`);
    this.name = 'ProbeUnavailable';
  }
}

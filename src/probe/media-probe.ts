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
  /** Rejects only when the probe itself cannot run (a missing tool), never because of the file. */
  probe(path: string): Promise<ProbedMedia | ProbeFailure>;
}

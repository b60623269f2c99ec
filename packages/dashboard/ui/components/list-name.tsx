// How the dashboard names a suppression list (docs/dashboard.md, "Suppressions"): the project-wide one,
// which holds back all mail, or a stream's, which holds back that stream's mail only.

/** A list in running text: "the project-wide list", or "the list of stream marketing" (the name kept as typed, isolated). */
export function listPhrase(stream: string | undefined) {
  return stream === undefined ? (
    'the project-wide list'
  ) : (
    <>
      the list of stream <bdi class="literal">{stream}</bdi>
    </>
  );
}

/** `listPhrase` as plain text, for notices. */
export function listText(stream: string | undefined): string {
  return stream === undefined ? 'the project-wide list' : `the list of stream ${stream}`;
}

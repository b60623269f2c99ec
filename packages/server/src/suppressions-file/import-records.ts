/** One record of an import file, as a reader found it, before its format says what it means. */
export interface SourceRecord {
  /** The physical line it starts on, 1-based. */
  line: number;
  /** Byte offset just past it: everything before is done once it is, so a resume starts here. */
  end: number;
  /** The line at `end`: where a resume continues counting. */
  nextLine: number;
  /** As written in the file (without its trailing line break), for the rejects file. */
  text: string;
  /** CSV: its fields. */
  fields?: string[];
  /** JSON Lines and JSON documents: the parsed value. */
  json?: unknown;
  /** Set when the record could not be read at all (bad JSON, a quote never closed). */
  error?: string;
}

/** The file cannot be imported as it is (a format it is not, a record too long to read past). */
export class ImportFileError extends Error {
  override readonly name = 'ImportFileError';
}

/**
 * An error in a file the user gave or a run left behind (a record, a checkpoint, a scene): the
 * command line reports it as bad input (exit code 2) with the file's name, not as a crash.
 */
export class InputFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = "InputFileError";
  }
}

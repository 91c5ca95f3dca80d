/** A stdout/stderr stand-in for runCli: not a terminal, keeps everything written to it. */
export class Sink {
  text = '';
  isTTY = false;
  write(s: string) {
    this.text += s;
    return true;
  }
}

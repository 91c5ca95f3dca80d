/** Without a token the API must stay on the loopback interface: anyone who can reach it could start runs. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || h === '::ffff:127.0.0.1';
}

/** Returns why the server must not start, or null. */
export function listenRefusal(host: string, token: string | undefined): string | null {
  if (token || isLoopbackHost(host)) return null;
  return (
    `refusing to listen on ${host} without an API token: set RUNTRAIL_API_TOKEN (clients then send ` + `"Authorization: Bearer <token>") or bind to 127.0.0.1`
  );
}

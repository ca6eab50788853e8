import { createServer, type Server, type Socket } from 'node:net';
import { BSON, type Document } from 'mongodb';

// Scripted servers that speak MongoDB's wire protocol (OP_MSG, and OP_QUERY for the first handshake)
// on real sockets. They are NOT MongoDB: they answer `hello` with a topology and every other command
// from the test's script, and record what arrived. They let the real driver (both majors) do its own
// server selection and write-concern encoding, so a test sees what the store puts on the wire; what a
// server then does with it is for the real-server suites.

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;
const CHECKSUM_PRESENT = 1;
const MORE_TO_COME = 2;

/** What a member claims to be in its `hello` reply. */
export type MemberRole = 'primary' | 'secondary' | 'mongos';

/** One command as it arrived, with the member (by port) that received it. */
export interface WireCommand {
  readonly port: number;
  readonly role: MemberRole;
  readonly name: string;
  readonly body: Document;
}

/** Answers a command (every command but the handshake); `undefined` answers `{ ok: 1 }`. */
export type Responder = (command: WireCommand) => Document | undefined;

/** A running scripted deployment. */
export interface ScriptedDeployment {
  /** A connection string for every member, with `query` appended (e.g. `readPreference=secondaryPreferred`). */
  url(query?: string): string;
  /** Every command the members received, handshakes and monitoring excluded. */
  readonly commands: WireCommand[];
  /** Port of the member with `role`. */
  port(role: MemberRole): number;
  close(): Promise<void>;
}

const HANDSHAKES = new Set(['hello', 'ismaster', 'isMaster']);
const ELECTION_ID = new BSON.ObjectId('7fffffff0000000000000001');

/** An empty cursor reply (`find`, `listCollections`, `aggregate`) holding `documents`. */
export function cursorReply(ns: string, documents: Document[] = []): Document {
  return { cursor: { firstBatch: documents, id: BSON.Long.fromNumber(0), ns }, ok: 1 };
}

/**
 * Starts members with the given roles on free local ports. A replica set (`primary` plus
 * `secondary`s) answers as set `rs0`; a `mongos` answers as a router.
 */
export async function scriptedDeployment(roles: readonly MemberRole[], respond: Responder): Promise<ScriptedDeployment> {
  const commands: WireCommand[] = [];
  const sockets = new Set<Socket>();
  const servers: { role: MemberRole; server: Server; port: number }[] = [];
  for (const role of roles) {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (typeof address !== 'object' || address === null) throw new Error('no port');
    servers.push({ role, server, port: address.port });
  }
  const host = (port: number) => `127.0.0.1:${port}`;
  const hosts = servers.filter((member) => member.role !== 'mongos').map((member) => host(member.port));
  const primary = servers.find((member) => member.role === 'primary');
  let connectionId = 0;

  const hello = (role: MemberRole, port: number): Document => {
    const common = {
      helloOk: true,
      maxBsonObjectSize: 16 * 1024 * 1024,
      maxMessageSizeBytes: 48_000_000,
      maxWriteBatchSize: 100_000,
      localTime: new Date(),
      logicalSessionTimeoutMinutes: 30,
      connectionId: ++connectionId,
      minWireVersion: 0,
      maxWireVersion: 21,
      readOnly: false,
      ok: 1,
    };
    if (role === 'mongos') return { ...common, isWritablePrimary: true, ismaster: true, msg: 'isdbgrid' };
    return {
      ...common,
      isWritablePrimary: role === 'primary',
      ismaster: role === 'primary',
      secondary: role === 'secondary',
      setName: 'rs0',
      setVersion: 1,
      electionId: ELECTION_ID,
      hosts,
      primary: primary ? host(primary.port) : undefined,
      me: host(port),
    };
  };

  const answer = (role: MemberRole, port: number, body: Document): Document => {
    const name = Object.keys(body)[0] ?? '';
    if (HANDSHAKES.has(name)) return hello(role, port);
    const command = { port, role, name, body };
    commands.push(command);
    return respond(command) ?? { ok: 1 };
  };

  const header = (length: number, responseTo: number, opCode: number) => {
    const buffer = Buffer.alloc(16);
    buffer.writeInt32LE(length, 0);
    buffer.writeInt32LE(0, 4);
    buffer.writeInt32LE(responseTo, 8);
    buffer.writeInt32LE(opCode, 12);
    return buffer;
  };

  const handle = (role: MemberRole, port: number, socket: Socket, message: Buffer) => {
    const requestId = message.readInt32LE(4);
    const opCode = message.readInt32LE(12);
    if (opCode === OP_QUERY) {
      // flags, then the namespace as a C string, then skip and return counts, then the command.
      const start = message.indexOf(0, 20) + 1 + 8;
      const body = BSON.deserialize(message.subarray(start, start + message.readInt32LE(start)));
      const reply = Buffer.from(BSON.serialize(answer(role, port, body)));
      const fields = Buffer.alloc(20);
      fields.writeInt32LE(1, 16);
      socket.write(Buffer.concat([header(16 + 20 + reply.length, requestId, OP_REPLY), fields, reply]));
      return;
    }
    if (opCode !== OP_MSG) throw new Error(`scripted wire: op code ${opCode} is not supported`);
    const flags = message.readUInt32LE(16);
    const end = message.length - (flags & CHECKSUM_PRESENT ? 4 : 0);
    let body: Document = {};
    const sequences: Document = {};
    for (let offset = 20; offset < end; ) {
      const kind = message[offset++];
      const size = message.readInt32LE(offset);
      if (kind === 0) {
        body = BSON.deserialize(message.subarray(offset, offset + size));
      } else {
        // A document sequence: size, identifier, then documents up to the size.
        const nul = message.indexOf(0, offset + 4);
        const documents: Document[] = [];
        for (let at = nul + 1; at < offset + size; at += message.readInt32LE(at)) {
          documents.push(BSON.deserialize(message.subarray(at, at + message.readInt32LE(at))));
        }
        sequences[message.toString('utf8', offset + 4, nul)] = documents;
      }
      offset += size;
    }
    const reply = answer(role, port, { ...body, ...sequences });
    if (flags & MORE_TO_COME) return;
    const payload = Buffer.from(BSON.serialize(reply));
    const sections = Buffer.alloc(5);
    sections.writeUInt32LE(0, 0);
    socket.write(Buffer.concat([header(16 + 5 + payload.length, requestId, OP_MSG), sections, payload]));
  };

  for (const { role, server, port } of servers) {
    server.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        while (pending.length >= 4 && pending.length >= pending.readInt32LE(0)) {
          const length = pending.readInt32LE(0);
          handle(role, port, socket, pending.subarray(0, length));
          pending = pending.subarray(length);
        }
      });
    });
  }

  return {
    commands,
    url: (query = '') => {
      const seeds = servers.map((member) => host(member.port)).join(',');
      const options = [roles.includes('mongos') ? '' : 'replicaSet=rs0', 'serverSelectionTimeoutMS=2000', query].filter(Boolean).join('&');
      return `mongodb://${seeds}/app?${options}`;
    },
    port: (role) => {
      const member = servers.find((candidate) => candidate.role === role);
      if (!member) throw new Error(`no ${role} member`);
      return member.port;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map(({ server }) => new Promise<void>((resolve) => server.close(() => resolve()))));
    },
  };
}

/** Connects `client` and waits until its topology has seen a secondary, so reads could go there. */
export async function connectSeeingSecondary(client: {
  connect(): Promise<unknown>;
  on(event: 'topologyDescriptionChanged', listener: (event: { newDescription: { servers: Map<string, { type: string }> } }) => void): unknown;
}): Promise<void> {
  const seen = new Promise<void>((resolve) =>
    client.on('topologyDescriptionChanged', (event) => {
      if ([...event.newDescription.servers.values()].some((server) => server.type === 'RSSecondary')) resolve();
    }),
  );
  await client.connect();
  await seen;
}

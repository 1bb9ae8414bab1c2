import { Conversation } from './conversation';

const someone = { kind: 'participant' as const, id: 'prt_1' };

describe('Conversation', () => {
  test('when more messages arrive than it keeps, then the oldest are forgotten and seq keeps increasing', () => {
    const conversation = new Conversation({ limit: 3 });
    for (let i = 1; i <= 5; i++) conversation.append(someone, `m${i}`);
    expect(conversation.after(0).map((m) => [m.seq, m.text])).toEqual([
      [3, 'm3'],
      [4, 'm4'],
      [5, 'm5'],
    ]);
    expect(conversation.append(someone, 'm6').seq).toBe(6);
  });

  test('when read after a seq with a limit, then only later messages come, oldest first, at most the limit', () => {
    const conversation = new Conversation();
    for (let i = 1; i <= 5; i++) conversation.append(someone, `m${i}`);
    expect(conversation.after(2, 2).map((m) => m.seq)).toEqual([3, 4]);
    expect(conversation.after(5)).toEqual([]);
  });

  test('when a reply is appended, then listeners hear it with in_reply_to, until they unsubscribe', () => {
    const conversation = new Conversation({ now: () => new Date('2030-01-01T00:00:00Z') });
    const heard: number[] = [];
    const unsubscribe = conversation.subscribe((m) => heard.push(m.seq));
    const asked = conversation.append(someone, 'hi');
    const reply = conversation.append({ kind: 'agent', id: 'agt_1' }, 'hello', asked.seq);
    unsubscribe();
    conversation.append(someone, 'unheard');
    expect(heard).toEqual([1, 2]);
    expect(reply).toMatchObject({ in_reply_to: 1, created_at: '2030-01-01T00:00:00.000Z' });
    expect(asked.in_reply_to).toBeNull();
    expect(conversation.subscriberCount()).toBe(0);
  });
});

import { createOperationRules } from './agent-operations';

describe('caller kinds per operation, from the router document', () => {
  const rules = createOperationRules();

  test('when the terminal is asked for, then participants only', () => {
    expect(rules('GET', '/terminal')).toEqual(['participant']);
  });

  test('when health or chat is asked for, then participants and agents', () => {
    for (const [method, path] of [
      ['GET', '/global/health'],
      ['HEAD', '/global/health'],
      ['GET', '/chat/messages'],
      ['POST', '/chat/messages'],
      ['GET', '/chat/stream'],
      ['GET', '/not/in/the/document'],
    ]) {
      expect(rules(method!, path!)).toEqual(['participant', 'agent']);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { outputQueueRefused } from '../../lib/runs/queue/sqs.ts';

describe('where a queue message may send its results', () => {
  it('takes SQS queues of AWS, and queues on the configured endpoint', () => {
    expect(outputQueueRefused('https://sqs.eu-west-1.amazonaws.com/111122223333/out')).toBeUndefined();
    expect(outputQueueRefused('https://sqs.cn-north-1.amazonaws.com.cn/111122223333/out')).toBeUndefined();
    expect(outputQueueRefused('https://queue.amazonaws.com/111122223333/out')).toBeUndefined();
    expect(
      outputQueueRefused('http://127.0.0.1:9324/000000000000/out', 'http://127.0.0.1:9324'),
    ).toBeUndefined();
  });

  it('refuses any other host, since the SDK would send it a request signed with our credentials', () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'https://collector.test/q',
      'http://sqs.eu-west-1.amazonaws.com/111122223333/out',
      'https://sqs.eu-west-1.amazonaws.com.collector.test/q',
      'http://127.0.0.1:9999/000000000000/out',
    ])
      expect(outputQueueRefused(url, 'http://127.0.0.1:9324'), url).toMatch(
        /^output\.queueUrl: .* is not an SQS queue/,
      );
    expect(outputQueueRefused('not a url')).toBe('output.queueUrl: not a URL');
  });
});

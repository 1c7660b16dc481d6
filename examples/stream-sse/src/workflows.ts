import { defineWorkflow } from '@cairn/core';

/**
 * Writes `count` tokens to the stream `tokens`, one step each (a model call in a real app), then
 * closes it. Each token is emitted after its step succeeded, so a retried call never repeats one.
 */
export const story = defineWorkflow('story', async (ctx, input: { count: number; pauseMs: number }) => {
  const out = ctx.stream<{ token: string }>('tokens');
  for (let i = 0; i < input.count; i += 1) {
    const token = await ctx.step(`token-${i}`, async () => {
      await new Promise((resolve) => setTimeout(resolve, input.pauseMs));
      return `word${i}`;
    });
    await out.write({ token });
  }
  await out.close();
  return { tokens: input.count };
});

package io.kse.policy.load;

import io.kse.policy.PolicyParser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads a policy file as the extender and the CLI both must: bounded in size before it is read, and
 * strictly UTF-8, each failure a message naming the file and what is wrong with it.
 */
public final class PolicyFile {
  /** Room for comments around {@link PolicyParser#MAX_CHARS} characters of multi-byte text. */
  public static final long MAX_BYTES = 4L * PolicyParser.MAX_CHARS;

  private PolicyFile() {}

  /** The file's text; an {@link IllegalArgumentException} says why it cannot be a policy. */
  public static String read(Path file) {
    return read(file, "policy file");
  }

  /** As {@link #read(Path)}, naming the file as {@code what} (e.g. "pod file") in messages. */
  public static String read(Path file, String what) {
    byte[] bytes;
    try {
      long size = Files.size(file);
      if (size > MAX_BYTES) {
        throw new IllegalArgumentException(
            what + " " + file + " is " + size + " bytes; at most " + MAX_BYTES);
      }
      bytes = Files.readAllBytes(file);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot read " + file + " (" + what + "): " + e, e);
    }
    CharsetDecoder utf8 =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes);
    try {
      return utf8.decode(in).toString();
    } catch (CharacterCodingException e) {
      throw new IllegalArgumentException(
          what + " " + file + " is not UTF-8 text (invalid byte near offset " + in.position() + ")",
          e);
    }
  }
}
